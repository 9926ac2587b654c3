package io.binomic.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The example of this module's javadoc, shown by a {@code {@snippet class=... region=...}} tag
 * (javadoc reads this file through {@code --snippet-path}): compiled and run here.
 */
class JavadocSnippetsTest {
    static final Task<String, String> ECHO = Task.builder("echo", String.class, String.class).build();

    @Test
    void theBinderIsBoundBeforeTheWorkerStarts() throws Exception {
        MeterRegistry registry = new SimpleMeterRegistry();
        try (Binomic binomic = Binomic.builder().handle(ECHO, s -> s).build().start()) {
            // @start region="bind"
            BinomicMeterBinder metrics = new BinomicMeterBinder(binomic);
            metrics.bindTo(registry);
            binomic.startWorker();
            // @end
            binomic.submit(ECHO, "x").await(Duration.ofSeconds(30));
            assertEquals(1, registry.get("binomic.task.duration").tag("task", "echo").timer().count());
        }
    }
}
