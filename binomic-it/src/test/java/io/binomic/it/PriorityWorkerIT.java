package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A worker against a real Redis with a backlog of low-priority jobs: a high-priority job submitted
 * by another client starts within one fetch, not after the backlog.
 */
class PriorityWorkerIT {

    @Test
    void aHighPriorityJobOvertakesABacklogOfLowPriorityOnesWithinOneFetch() throws Exception {
        String queue = "prio-e2e-" + UUID.randomUUID().toString().substring(0, 8);
        Task<Integer, Void> work = Task.builder("work", Integer.class).queue(queue).priority(2).build();
        List<Integer> started = Collections.synchronizedList(new ArrayList<>());
        int concurrency = 2;
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisServer.shared().url())
                .worker(WorkerConfig.builder().queues(queue).concurrency(concurrency).build()).build();
        try (Binomic producer = Binomic.builder().config(config).build().start();
             Binomic worker = Binomic.builder().config(config).handle(work, n -> {
                 started.add(n);
                 Thread.sleep(30);
                 return null;
             }).build().start()) {
            producer.submitAll(work, IntStream.range(0, 300).boxed().toList()); // priority 2, the task's
            worker.startWorker();
            Await.until(Duration.ofSeconds(30), () -> started.size() >= 20, () -> "started: " + started.size());

            int startedBefore = started.size();
            producer.submit(work, -1, SubmitOptions.builder().priority(9).build());
            Await.until(Duration.ofSeconds(30), () -> started.contains(-1), () -> "the urgent job never ran; started: " + started.size());

            int urgentAt = started.indexOf(-1);
            int overtakenBy = urgentAt - startedBefore;
            System.out.println("PRIORITY e2e: urgent job submitted after " + startedBefore + " of 300 low-priority jobs started, ran as"
                    + " number " + (urgentAt + 1) + ": " + overtakenBy + " low-priority job(s) started in between (concurrency "
                    + concurrency + ")");
            assertTrue(overtakenBy <= 2 * concurrency, "at most the running jobs and one fetch of low-priority jobs start"
                    + " before the urgent one; " + overtakenBy + " did");
            assertTrue(urgentAt < 150, "the backlog was still there when the urgent job ran (position " + urgentAt + ")");
        }
    }
}
