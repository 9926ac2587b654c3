package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.TaskExecutionListener.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** What a metrics library reads of a client: each execution as it ends, and the counts it cannot time itself. */
class TaskExecutionListenerTest {
    record Execution(String queue, String task, Outcome outcome, Duration duration) { }

    static final Task<String, String> ECHO = Task.builder("echo", String.class, String.class).queue("q").build();
    static final Task<String, Void> FAIL = Task.builder("fail", String.class).queue("q").maxAttempts(1)
            .backoff(Backoff.fixed(Duration.ofMillis(10))).build();

    @Test
    void listenersHearEveryExecutionAndOneThatThrowsDoesNotFailTheTask() throws InterruptedException {
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
            binomic.addTaskExecutionListener((queue, task, outcome, duration) -> heard.add(new Execution(queue, task, outcome, duration)));
            binomic.addTaskExecutionListener((queue, task, outcome, duration) -> {
                throw new IllegalStateException("a broken listener");
            });
            assertTrue(binomic.workers().isEmpty(), "no worker before startWorker");
            Worker worker = binomic.startWorker();
            assertEquals(List.of(worker), binomic.workers());

            assertEquals("a", binomic.submit(ECHO, "a").await(Duration.ofSeconds(10)));
            binomic.submit(FAIL, "b");
            WorkerTest.await("the failure heard", () -> heard.size() == 2);

            assertEquals(new Execution("q", "echo", Outcome.SUCCEEDED, heard.get(0).duration()), heard.get(0));
            assertTrue(heard.get(0).duration().compareTo(Duration.ofMillis(15)) >= 0, "the handler's run time: " + heard.get(0));
            assertEquals(Outcome.FAILED, heard.get(1).outcome());
            assertEquals("fail", heard.get(1).task());
            TaskStats echo = binomic.taskStats().stream().filter(s -> s.task().equals("echo")).findFirst().orElseThrow();
            assertEquals(1, echo.succeeded());
            assertEquals(0, echo.cancelled());
            assertEquals(0L, binomic.reclaims().getOrDefault("q", 0L));

            worker.close();
            assertTrue(binomic.workers().isEmpty(), "a stopped worker is not listed");
        }
    }
}
