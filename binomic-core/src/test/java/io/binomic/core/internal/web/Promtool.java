package io.binomic.core.internal.web;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs Debian's {@code promtool check metrics} (package {@code prometheus}, installed by
 * {@code .ci/run}) on an exposition. Absent, the test fails saying how to install it: a metrics
 * format nobody checks is the one Prometheus then refuses.
 */
public final class Promtool {
    private Promtool() { }

    /** Asserts that promtool finds neither an error nor a lint problem in {@code exposition}. */
    public static void assertValid(String exposition) throws IOException, InterruptedException {
        Path promtool = Path.of("/usr/bin/promtool");
        String onPath = System.getenv().getOrDefault("PATH", "");
        for (String dir : onPath.split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "promtool"))) {
                promtool = Path.of(dir, "promtool");
                break;
            }
        }
        if (!Files.isExecutable(promtool)) {
            throw new AssertionError("promtool is not installed, and this test checks /metrics with it: install Debian's"
                    + " prometheus package (apt-get install -y prometheus), as .ci/run does");
        }
        Process p = new ProcessBuilder(promtool.toString(), "check", "metrics").redirectErrorStream(true).start();
        try (var in = p.getOutputStream()) {
            in.write(exposition.getBytes(StandardCharsets.UTF_8));
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        int exit = p.waitFor();
        assertEquals("", output.strip(), "promtool check metrics found problems in:\n" + exposition);
        assertEquals(0, exit, "promtool check metrics exit code; output:\n" + output);
    }
}
