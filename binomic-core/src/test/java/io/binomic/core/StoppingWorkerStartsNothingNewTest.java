package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A worker's stop lets its running tasks finish and starts no new one. Found by an outside tester: a read that waited while
 * the stop began (Redis frozen, or a worker stopped as it came up) returned jobs the draining worker then started, and the
 * grace's end cut them off, so their handlers ran twice.
 */
class StoppingWorkerStartsNothingNewTest {

    @Test
    void aJobReadByTheFetchUnderWayWhenTheStopBeganIsGivenBackNotStarted() throws Exception {
        List<String> runs = new CopyOnWriteArrayList<>();
        Task<String, Void> work = Task.builder("work", String.class).build();
        BinomicConfig config = BinomicConfig.builder().taskDefaults(TaskDefaults.defaults())
                .worker(WorkerConfig.builder().pollTimeout(Duration.ofSeconds(3)).shutdownGrace(Duration.ofSeconds(2)).build()).build();
        try (Binomic binomic = Binomic.builder().config(config).codec(new TextCodec())
                .handle(work.handledBy((String s) -> {
                    runs.add(s + " on " + Thread.currentThread().getName());
                    return null;
                })).build().start()) {
            Worker stopping = binomic.startWorker();
            WorkerTest.await("the worker reads its queue", () -> binomic.queueStats("default").consumers() == 1);
            Thread.sleep(300); // its fetch waits for a job (poll timeout 3 s)

            Thread stopper = Thread.ofPlatform().start(() -> stopping.stop(Duration.ofSeconds(2)));
            Thread.sleep(300); // the stop began: the fetch still waits
            binomic.submit(work, "late");
            stopper.join(TimeUnit.SECONDS.toMillis(20));

            assertEquals(List.of(), runs, "a stopping worker starts nothing new");
            QueueStats after = binomic.queueStats("default");
            assertEquals(0, after.pending(), "the job read during the stop is not left pending for a reclaim: " + after);

            binomic.startWorker();
            WorkerTest.await("the job given back runs on the next worker", () -> runs.size() == 1);
            Thread.sleep(500);
            assertEquals(1, runs.size(), "once: " + runs);
        }
    }
}
