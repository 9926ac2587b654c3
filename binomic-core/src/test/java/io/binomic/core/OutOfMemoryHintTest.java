package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.DeadLetterFilter;
import io.binomic.api.Task;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Found by an outside tester: a handler that ran out of heap under the master's default maximum was
 * dead-lettered with a bare "Java heap space", which names neither the worker's heap nor how to raise it.
 */
class OutOfMemoryHintTest {
    @Test
    void aHandlerThatRanOutOfHeapIsRecordedWithTheHeapItHadAndHowToRaiseIt() throws Exception {
        Task<String, Void> hungry = Task.builder("hungry", String.class).queue("big").maxAttempts(1).build();
        try (Binomic binomic = Binomic.builder().handle(hungry, s -> {
            throw new OutOfMemoryError("Java heap space");
        }).build().start()) {
            binomic.startWorker();
            binomic.submit(hungry, "x");
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (binomic.queueStats("big").deadLetters() < 1 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            var letters = binomic.deadLetters().list("big", DeadLetterFilter.all(), 10);
            assertEquals(1, letters.size(), letters.toString());
            String message = letters.getFirst().failure().errorMessage();
            assertEquals("java.lang.OutOfMemoryError", letters.getFirst().failure().errorClass());
            assertTrue(message.startsWith("Java heap space (this worker JVM's maximum heap is "
                    + Runtime.getRuntime().maxMemory() / (1024 * 1024) + " MiB: give it more with -Xmx"), message);
            assertTrue(message.contains("--jvm-option=-Xmx512m"), message);
        }
    }
}
