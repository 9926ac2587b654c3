package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Backoff;
import io.binomic.api.NonRetryableException;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.RunObserver.RunOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

/** The run hook: what an observer is told of each run, on which thread, and that it cannot change an outcome. */
class RunObserverTest {

    /** One observed run: task, attempt, whether enter ran on the handler's thread, the outcome and failure. */
    record Seen(String task, int attempt, boolean enteredOnHandlerThread, RunOutcome outcome, Optional<String> failure) { }

    private static final class Recording implements RunObserver {
        final List<Seen> seen = new CopyOnWriteArrayList<>();
        final ThreadLocal<String> current = new ThreadLocal<>();

        @Override
        public Run started(TaskContext job) {
            return new Run() {
                volatile boolean entered;

                @Override
                public Runnable enter() {
                    current.set(job.messageId().toString());
                    return () -> {
                        entered = job.messageId().toString().equals(current.get());
                        current.remove();
                    };
                }

                @Override
                public void ended(RunOutcome outcome, Optional<Throwable> failure) {
                    seen.add(new Seen(job.task(), job.attempt(), entered, outcome, failure.map(f -> f.getClass().getSimpleName())));
                }
            };
        }
    }

    @Test
    void anObserverSeesEachRunsOutcomeAndItsHandlersThread() throws Exception {
        Task<String, Void> flaky = Task.builder("flaky", String.class).maxAttempts(2).backoff(Backoff.fixed(Duration.ofMillis(10))).build();
        Task<String, Void> refused = Task.builder("refused", String.class).maxAttempts(3).build();
        Task<String, Void> slow = Task.builder("slow", String.class).maxAttempts(1).timeout(Duration.ofMillis(100)).build();
        Recording observer = new Recording();
        List<String> sawScope = new CopyOnWriteArrayList<>();
        try (Binomic binomic = Binomic.builder().runObserver(observer)
                .runObserver(job -> {
                    throw new IllegalStateException("a broken observer is logged and skipped");
                })
                .handle(flaky, s -> {
                    sawScope.add(String.valueOf(observer.current.get()));
                    if (TaskContext.current().attempt() == 1) {
                        throw new IllegalArgumentException("first attempt fails");
                    }
                    return null;
                })
                .handle(refused, s -> {
                    throw new NonRetryableException("never");
                })
                .handle(slow, s -> {
                    Thread.sleep(5_000);
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            binomic.submit(flaky, "a");
            binomic.submit(refused, "b");
            binomic.submit(slow, "c");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (observer.seen.size() < 4 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        }
        List<Seen> seen = observer.seen;
        assertEquals(4, seen.size(), seen::toString);
        assertTrue(seen.contains(new Seen("flaky", 1, true, RunOutcome.RETRYING, Optional.of("IllegalArgumentException"))), seen::toString);
        assertTrue(seen.contains(new Seen("flaky", 2, true, RunOutcome.SUCCEEDED, Optional.empty())), seen::toString);
        assertTrue(seen.contains(new Seen("refused", 1, true, RunOutcome.DEAD_LETTERED, Optional.of("NonRetryableException"))),
                seen::toString);
        assertTrue(seen.contains(new Seen("slow", 1, true, RunOutcome.DEAD_LETTERED, Optional.of(TimeoutException.class.getSimpleName()))),
                seen::toString);
        assertEquals(2, sawScope.size());
        assertTrue(sawScope.stream().noneMatch("null"::equals), "what enter() set is visible to the handler: " + sawScope);
    }
}
