package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.RunObserver.RunOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * What a metrics library bound after the client is built reads of it: each run as it ends, timed
 * by the observer it adds, and the counts it cannot time itself.
 */
class AddedRunObserverTest {
    record Execution(String queue, String task, RunOutcome outcome, Duration duration) { }

    /** Times each run as a metrics library does: from just before the handler to just after. */
    record Timing(List<Execution> heard) implements RunObserver {
        @Override
        public Run started(TaskContext job) {
            long[] nanos = {-1};
            return new Run() {
                @Override
                public Runnable enter() {
                    long start = System.nanoTime();
                    return () -> nanos[0] = System.nanoTime() - start;
                }

                @Override
                public void ended(RunOutcome outcome, Optional<Throwable> failure) {
                    heard.add(new Execution(job.queue(), job.task(), outcome, Duration.ofNanos(nanos[0])));
                }
            };
        }
    }

    static final Task<String, String> ECHO = Task.builder("echo", String.class, String.class).queue("q").build();
    static final Task<String, Void> FAIL = Task.builder("fail", String.class).queue("q").maxAttempts(1)
            .backoff(Backoff.fixed(Duration.ofMillis(10))).build();

    @Test
    void observersAddedToABuiltClientHearEveryRunAndOneThatThrowsDoesNotFailTheTask() throws InterruptedException {
        List<Execution> heard = new CopyOnWriteArrayList<>();
        try (Binomic binomic = Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().pollTimeout(Duration.ofMillis(50)).build()).build())
                .handle(ECHO, s -> {
                    Thread.sleep(15);
                    return s;
                })
                .handle(FAIL, s -> {
                    throw new IllegalStateException("always");
                })
                .build().start()) {
            Timing timing = new Timing(heard);
            binomic.addRunObserver(timing);
            binomic.addRunObserver(job -> {
                throw new IllegalStateException("a broken observer");
            });
            assertTrue(binomic.workers().isEmpty(), "no worker before startWorker");
            Worker worker = binomic.startWorker();
            assertEquals(List.of(worker), binomic.workers());

            assertEquals("a", binomic.submit(ECHO, "a").await(Duration.ofSeconds(10)));
            binomic.submit(FAIL, "b");
            WorkerTest.await("the failure heard", () -> heard.size() == 2);

            assertEquals(new Execution("q", "echo", RunOutcome.SUCCEEDED, heard.get(0).duration()), heard.get(0));
            assertTrue(heard.get(0).duration().compareTo(Duration.ofMillis(15)) >= 0, "the handler's run time: " + heard.get(0));
            assertEquals(RunOutcome.DEAD_LETTERED, heard.get(1).outcome());
            assertEquals("fail", heard.get(1).task());
            TaskStats echo = binomic.taskStats().stream().filter(s -> s.task().equals("echo")).findFirst().orElseThrow();
            assertEquals(1, echo.succeeded());
            assertEquals(0, echo.cancelled());
            assertEquals(0L, binomic.reclaims().getOrDefault("q", 0L));

            binomic.removeRunObserver(timing);
            assertEquals("c", binomic.submit(ECHO, "c").await(Duration.ofSeconds(10)));
            assertEquals(2, heard.size(), "a removed observer hears no run that starts after: " + heard);

            worker.close();
            assertTrue(binomic.workers().isEmpty(), "a stopped worker is not listed");
        }
    }
}
