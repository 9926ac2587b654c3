package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.internal.cli.BinomicCli;
import io.binomic.core.internal.process.JavaCommand;
import io.binomic.it.RedisServer;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code binomic dashboard} in its own JVM, stopped as a service manager stops it: it says so and exits 0. */
class DashboardCommandStopOnRedisTest {
    @TempDir
    Path dir;

    @Test
    void sigtermStopsTheDashboardWithItsStopLineAndExitCodeZero() throws Exception {
        Path log = dir.resolve("dashboard.log");
        Process dashboard = new ProcessBuilder(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"),
                List.of("dashboard", "--broker", RedisServer.shared().url(), "--port", "0")))
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Fixture.await("the dashboard's address in the log", () -> read(log), () -> read(log).contains("dashboard on http://"));
            Matcher m = Pattern.compile("dashboard on (http://\\S+/) ").matcher(read(log));
            assertTrue(m.find(), read(log));
            String page = get(URI.create(m.group(1)));
            assertTrue(page.contains("<html"), "the dashboard serves its overview: " + page);

            dashboard.destroy(); // SIGTERM, as systemd and Kubernetes stop a service

            assertTrue(dashboard.waitFor(30, TimeUnit.SECONDS), "dashboard exits; log: " + read(log));
            assertEquals(0, dashboard.exitValue(), "a dashboard stopped on request exits 0; log: " + read(log));
            assertTrue(read(log).contains("dashboard pid " + dashboard.pid() + " stopped"), "its stop line; log: " + read(log));
        } finally {
            dashboard.destroyForcibly();
        }
    }

    private static String get(URI uri) throws IOException {
        try (var in = uri.toURL().openStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
