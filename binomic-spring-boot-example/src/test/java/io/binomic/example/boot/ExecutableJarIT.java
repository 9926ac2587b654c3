package io.binomic.example.boot;

import io.binomic.testsupport.RedisProcess;
import static org.assertj.core.api.Assertions.assertThat;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.JobState;
import io.binomic.core.Binomic;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example packaged by spring-boot-maven-plugin and started as a process, as it is deployed:
 * a job submitted over HTTP runs, {@code /actuator/health} says the worker consumes, and SIGTERM
 * lets the job that is running finish before the process exits.
 */
class ExecutableJarIT {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void submitOverHttpRunsHealthSaysConsumingAndSigtermDrains(@TempDir Path dir) throws Exception {
        Path jar = Path.of(System.getProperty("binomic.example.jar", "target/binomic-spring-boot-example-0.1.0-SNAPSHOT.jar"));
        assertThat(jar).as("the repackaged jar (mvn package)").exists();
        try (RedisProcess redis = RedisProcess.start()) {
            int port = freePort();
            String java = ProcessHandle.current().info().command().orElse("java");
            Path log = dir.resolve("app.log");
            // Output to a file: a child writing to the fork's own streams corrupts failsafe's channel.
            // C1 only: the test is about the start and the drain, and a loaded machine starts it faster so.
            Process app = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-jar", jar.toString(), "--server.port=" + port,
                    "--binomic.broker.url=" + redis.url(), "--binomic.worker.poll-timeout=200ms")
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                String base = "http://127.0.0.1:" + port;
                String health = await(app, log, "the health endpoint", () -> get(base + "/actuator/health"),
                        h -> Pattern.compile(GreetingApplicationTest.BINOMIC_UP_CONSUMING).matcher(h).find());
                assertThat(health).containsPattern(GreetingApplicationTest.BINOMIC_UP_CONSUMING);

                String quick = post(base + "/greetings?name=Ada");
                assertThat(await(app, log, "the quick job", () -> get(base + "/greetings/" + quick), s -> s.startsWith("SUCCEEDED")))
                        .contains("Hello Ada");

                String slow = post(base + "/greetings?name=Grace&workMillis=4000");
                await(app, log, "the slow job to start", () -> get(base + "/greetings/" + slow), s -> s.startsWith("RUNNING"));
                long signalled = System.nanoTime();
                app.destroy(); // SIGTERM, as a container runtime or systemd stops it
                assertThat(app.waitFor(30, TimeUnit.SECONDS)).as("the process exits within the shutdown phase:\n%s", tail(log)).isTrue();
                Duration took = Duration.ofNanos(System.nanoTime() - signalled);

                try (Binomic reader = Binomic.builder().config(BinomicConfig.builder().broker(BrokerConfig.builder().url(redis.url())
                        .keyPrefix("example").build()).build()).prepareQueues(false).build().start()) {
                    var status = reader.job(Greetings.GREET, UUID.fromString(slow)).status();
                    assertThat(status.state()).as("the running job finished during the drain:\n%s", tail(log)).isEqualTo(JobState.SUCCEEDED);
                    assertThat(status.result()).hasValueSatisfying(r -> assertThat(r).contains("Hello Grace"));
                }
                assertThat(took).as("the drain waited for the running job").isGreaterThan(Duration.ofMillis(500));
                String written = Files.readString(log);
                int httpStops = written.indexOf("Commencing graceful shutdown");
                int drainStarts = written.indexOf("Binomic worker ");
                assertThat(httpStops).as("the web server's graceful shutdown is logged:\n%s", tail(log)).isNotNegative();
                assertThat(drainStarts).as("the drain is logged at INFO after the web server stopped taking requests:\n%s", tail(log))
                        .isGreaterThan(httpStops);
                assertThat(written.substring(drainStarts)).containsPattern("Binomic worker \\S+ draining: 1 task\\(s\\) running")
                        .containsPattern("Binomic worker \\S+ stopped in \\d+ ms: \\d+ succeeded, .* 0 outcome\\(s\\) not written .*"
                                + " 0 task\\(s\\) cut off by the grace");
            } finally {
                if (app.isAlive()) {
                    app.destroyForcibly();
                }
            }
        }
    }

    private interface Call {
        String get() throws Exception;
    }

    private static String await(Process app, Path log, String what, Call call, Predicate<String> done) throws Exception {
        // Generous: a Boot start takes seconds alone, and over a minute on a loaded two-core machine.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(240);
        String last = null;
        while (System.nanoTime() < deadline) {
            if (!app.isAlive()) {
                throw new AssertionError("the application exited (" + app.exitValue() + ") while waiting for " + what + ":\n" + tail(log));
            }
            try {
                last = call.get();
                if (done.test(last)) {
                    return last;
                }
            } catch (IOException e) {
                last = e.toString(); // not listening yet
            }
            Thread.sleep(200);
        }
        throw new AssertionError("timed out waiting for " + what + "; last answer: " + last + "\n" + tail(log));
    }

    private static String get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static String post(String url) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("POST %s: %s", url, r.body()).isEqualTo(200);
        return r.body();
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private static String tail(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    }
}
