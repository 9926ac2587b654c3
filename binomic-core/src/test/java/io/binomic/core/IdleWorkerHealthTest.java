package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An idle worker reading several queues stays CONSUMING. Found by an outside tester: its health flapped to
 * BROKER_UNREACHABLE ("a reclaim has not returned for 2 s") with Redis answering at once, and a Spring Boot app's
 * health answered 503: the search for lost reads waits for each queue's turn behind the fetch under way (a blocking read
 * of up to the poll timeout), and that wait was timed as a broker call that had not returned.
 */
class IdleWorkerHealthTest {

    @Test
    void anIdleWorkerOfSeveralQueuesNeverLooksUnreachable() throws Exception {
        Task<String, Void> work = Task.builder("work", String.class).queue("a").build();
        WorkerConfig worker = WorkerConfig.builder().queues("a", "b", "c", "d").pollTimeout(Duration.ofMillis(500))
                .leaseTimeout(Duration.ofSeconds(2)).reclaimInterval(Duration.ofMillis(100)).build();
        try (Binomic binomic = Binomic.builder().config(BinomicConfig.builder().worker(worker).build()).codec(new TextCodec())
                .handle(work.handledBy((String s) -> null)).build().start()) {
            Worker w = binomic.startWorker();
            WorkerTest.await("the worker reads its queues", () -> binomic.queueStats("a").consumers() == 1);
            List<String> problems = new ArrayList<>();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
            while (System.nanoTime() < until) {
                WorkerHealth health = w.health();
                if (!health.consuming()) {
                    problems.add(health.state() + ": " + health.problem().orElse(""));
                }
                Thread.sleep(20);
            }
            assertEquals(List.of(), problems.stream().distinct().limit(5).toList(), "an idle worker with a broker that answers at once");
            binomic.submit(work, "x");
            WorkerTest.await("it still works", () -> w.counters().succeeded() == 1);
            assertTrue(w.health().consuming());
        }
    }
}
