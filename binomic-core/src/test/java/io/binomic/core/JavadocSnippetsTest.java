package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.JobHandle;
import io.binomic.api.Task;
import io.binomic.core.testing.TestMode;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The examples of this module's javadoc: each {@code @start region} below is shown by a
 * {@code {@snippet class=... region=...}} tag (javadoc reads this file through {@code --snippet-path}),
 * so the examples are compiled and run here and cannot drift from the API.
 */
class JavadocSnippetsTest {
    record Greeting(String name) { }

    record Welcome(String email) { }

    static final Task<Greeting, String> greet = Task.builder("greet", Greeting.class, String.class).build();

    static final class Tasks {
        static final Task<Welcome, String> WELCOME = Task.builder("welcome", Welcome.class, String.class).build();
    }

    /** Code under test that submits a job. */
    record SignUp(Binomic binomic) {
        void register(String email) {
            binomic.submit(Tasks.WELCOME, new Welcome(email));
        }
    }

    static final class Mailer {
        String welcome(Welcome welcome) {
            return "sent to " + welcome.email();
        }
    }

    @Test
    void aClientSubmitsAndItsWorkerRuns() throws Exception {
        // @start region="binomic"
        try (Binomic binomic = Binomic.builder().handle(greet, g -> "Hello " + g.name()).build().start()) {
            binomic.startWorker();
            JobHandle<String> job = binomic.submit(greet, new Greeting("Ada"));
            String greeting = job.await(Duration.ofSeconds(30));
            assertEquals("Hello Ada", greeting); // @replace regex='assertEquals.*;' replacement='// "Hello Ada"'
        }
        // @end
    }

    @Test
    void theTestModeKeepsJobsUntilDrained() {
        Mailer mailer = new Mailer();
        // @start region="test-mode"
        try (TestMode jobs = TestMode.manual().handle(Tasks.WELCOME, mailer::welcome).start()) {
            new SignUp(jobs.binomic()).register("ada@example.com");
            assertEquals(List.of(new Welcome("ada@example.com")), jobs.enqueued(Tasks.WELCOME));
            assertEquals(1, jobs.drain().succeeded());
        }
        // @end
    }

    @Test
    void theDashboardServesMetrics() throws Exception {
        try (Binomic binomic = Binomic.builder().task(greet).build().start()) {
            // @start region="dashboard"
            try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
                System.out.println("metrics at " + dashboard.uri().resolve("metrics"));
                assertScrapes(dashboard.uri().resolve("metrics")); // @replace regex='assertScrapes.*;' replacement='// serving until closed'
            }
            // @end
        }
    }

    private static void assertScrapes(URI metrics) throws Exception {
        HttpURLConnection scrape = (HttpURLConnection) metrics.toURL().openConnection();
        assertEquals(200, scrape.getResponseCode());
        try (InputStream in = scrape.getInputStream()) {
            String body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(body.contains("binomic_"), body);
        }
    }
}
