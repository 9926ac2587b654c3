package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Task;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.RunObserver.RunOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Found by an outside tester: handlers with timeout(2s) were interrupted 1.71-1.95 s after their
 * own first line. A task's timeout is the handler's run time: it starts when the handler is called.
 */
class TaskTimeoutStartTest {

    @Test
    void theTimeoutStartsWhenTheHandlerStartsNotBeforeTheObserversAroundIt() throws Exception {
        Duration timeout = Duration.ofMillis(400);
        Task<String, Void> sleepy = Task.builder("sleepy", String.class).maxAttempts(1).timeout(timeout).build();
        List<Long> handlerStarted = new CopyOnWriteArrayList<>();
        List<Long> handlerInterrupted = new CopyOnWriteArrayList<>();
        BlockingQueue<RunOutcome> outcomes = new LinkedBlockingQueue<>();
        RunObserver slowToEnter = job -> new RunObserver.Run() {
            @Override
            public Runnable enter() {
                try {
                    Thread.sleep(timeout.multipliedBy(3).dividedBy(2)); // an exporter slow on a loaded machine
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                return () -> { };
            }

            @Override
            public void ended(RunOutcome outcome, Optional<Throwable> failure) { outcomes.add(outcome); }
        };
        try (Binomic binomic = Binomic.builder().runObserver(slowToEnter).handle(sleepy, s -> {
            handlerStarted.add(System.nanoTime());
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                handlerInterrupted.add(System.nanoTime());
                throw e;
            }
            return null;
        }).build().start()) {
            binomic.startWorker();
            binomic.submit(sleepy, "x");
            assertEquals(RunOutcome.DEAD_LETTERED, outcomes.poll(30, TimeUnit.SECONDS), "it overran its timeout");
        }

        assertEquals(1, handlerInterrupted.size(), "interrupted once, by its timeout");
        // The clock starts at the call of the handler, which on a loaded machine can come well over
        // 100 ms before its first line (the call itself, first-time linkage; 118 ms seen at load 18);
        // started before the observer's 600 ms it would interrupt the handler at once.
        long ranNanos = handlerInterrupted.getFirst() - handlerStarted.getFirst();
        assertTrue(ranNanos >= timeout.dividedBy(2).toNanos(), "interrupted " + ranNanos / 1_000_000 + " ms after the handler"
                + " started, well before its timeout of " + timeout.toMillis() + " ms");
    }
}
