package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.time.ZoneId;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The examples of this module's javadoc: each {@code @start region} below is shown by a
 * {@code {@snippet class=... region=...}} tag (javadoc reads this file through {@code --snippet-path}),
 * so the examples are compiled and run here and cannot drift from the API.
 */
class JavadocSnippetsTest {
    record Greeting(String name) { }

    private static final AtomicInteger REPORTS = new AtomicInteger();

    private static void sendReport() {
        REPORTS.incrementAndGet();
    }

    @Test
    void tasksAreDeclaredWithoutCodeAndBoundToTheirHandlers() throws Exception {
        // @start region="task"
        // shared by producers and workers: no handler code
        Task<Greeting, String> greet = Task.builder("greet", Greeting.class, String.class).queue("mail").build();
        Task<Void, Void> report = Task.builder("report").cron("0 7 * * MON-FRI", ZoneId.of("Europe/Paris")).build();
        // on the worker side (or Binomic.builder().handle(greet, handler))
        TaskBinding<Greeting, String> greeting = greet.handledBy(g -> "Hello " + g.name());
        TaskBinding<Void, Void> reporting = report.handledBy(() -> sendReport());
        // @end
        assertEquals("mail", greet.queue());
        assertEquals(TaskMode.CRON, report.mode());
        assertSame(greet, greeting.task());
        assertEquals("Hello Ada", greeting.handler().handle(new Greeting("Ada")));
        reporting.handler().handle(null);
        assertEquals(1, REPORTS.get());
    }

    @Test
    void aConfigurationIsBuiltOnceWithItsDefaults() {
        // @start region="config"
        BinomicConfig config = BinomicConfig.builder().brokerUrl("redis://localhost:6379")
                .worker(WorkerConfig.builder().queues("mail").concurrency(20).build()).build();
        // @end
        assertEquals("redis://localhost:6379", config.broker().url());
        assertEquals(List.of("mail"), config.worker().queues());
        assertEquals(20, config.worker().concurrency());
    }
}
