package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A handler whose own code throws {@link CancellationException} (it joined a future somebody
 * cancelled) failed: it is retried with its backoff and dead-lettered once its attempts are spent,
 * not left pending to be found as a lost read and run again without end.
 */
class HandlerCancellationExceptionTest {
    private static final Task<String, Void> JOINS = Task.builder("joins-cancelled", String.class).queue("cancelled-futures")
            .maxAttempts(2).backoff(Backoff.fixed(Duration.ofMillis(20))).build();

    @Test
    void aCancellationExceptionTheHandlerThrowsSpendsItsAttemptsAndEndsInTheDeadLetters() throws InterruptedException {
        AtomicInteger calls = new AtomicInteger();
        try (Binomic binomic = Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().pollTimeout(Duration.ofMillis(50))
                        .reclaimInterval(Duration.ofMillis(100)).leaseTimeout(Duration.ofSeconds(2)).build()).build())
                .handle(JOINS, s -> {
                    calls.incrementAndGet();
                    CompletableFuture<String> upstream = new CompletableFuture<>();
                    upstream.cancel(false);
                    upstream.join();
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            binomic.submit(JOINS, "a");
            WorkerTest.await("the job dead-lettered", () -> binomic.deadLetters().count("cancelled-futures", DeadLetterFilter.all()) == 1);
            Thread.sleep(500); // a job left pending would be found again within a few recovery periods
            assertEquals(2, calls.get(), "one call per attempt, and no more");
            List<DeadLetter> letters = binomic.deadLetters().list("cancelled-futures", DeadLetterFilter.all(), 10);
            assertEquals(CancellationException.class.getName(), letters.getFirst().failure().errorClass(), letters.toString());
        }
    }
}
