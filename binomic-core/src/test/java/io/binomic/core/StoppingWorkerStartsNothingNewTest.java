package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.TaskContext;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
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

            // the job comes once the stop began (before, the worker would rightly run it); the fetch still waits
            Thread stopper = StopBegan.stopping(stopping.consumerName(), () -> stopping.stop(Duration.ofSeconds(2)));
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

    /**
     * A reclaim in flight when the stop began: what it took goes back as the attempt it is, not run past the grace, and not
     * left pending for a later reclaim to count one more attempt of a job that never ran.
     */
    @Test
    void aJobAReclaimInFlightAtTheStopTookIsGivenBackAsTheSameAttempt() throws Exception {
        Broker memory = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        CountDownLatch reclaimed = new CountDownLatch(1);
        CountDownLatch stopBegan = new CountDownLatch(1);
        ForwardingBroker broker = new ForwardingBroker(memory) {
            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                List<Delivery> taken = super.reclaim(queue, consumer, minIdle, max);
                if (!taken.isEmpty()) {
                    reclaimed.countDown();
                    boolean interrupted = false;
                    while (true) { // as a call the client does not cut off
                        try {
                            stopBegan.await();
                            break;
                        } catch (InterruptedException e) {
                            interrupted = true;
                        }
                    }
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                    }
                }
                return taken;
            }
        };
        List<Integer> attempts = new CopyOnWriteArrayList<>();
        Task<String, Void> work = Task.builder("work", String.class).build();
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().pollTimeout(Duration.ofMillis(100))
                .leaseTimeout(Duration.ofMillis(600)).reclaimInterval(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(2))
                .build()).build();
        try (Binomic binomic = Binomic.builder().config(config).codec(new TextCodec()).broker(broker).scheduler(broker.scheduler())
                .handle(work.handledBy((String s) -> {
                    attempts.add(TaskContext.current().attempt());
                    return null;
                })).build().start()) {
            binomic.submit(work, "stranded");
            assertEquals(1, memory.fetch(List.of("default"), "ghost", 1, Duration.ofMillis(100)).size(), "a worker that died holding it");
            Worker stopping = binomic.startWorker();
            assertTrue(reclaimed.await(20, TimeUnit.SECONDS), "the reclaim took it");

            Thread stopper = StopBegan.stopping(stopping.consumerName(), () -> stopping.stop(Duration.ofSeconds(2)));
            stopBegan.countDown();
            stopper.join(TimeUnit.SECONDS.toMillis(20));
            assertEquals(List.of(), attempts, "a stopping worker starts nothing it reclaimed");

            binomic.startWorker();
            WorkerTest.await("the job given back runs", () -> attempts.size() == 1);
            assertEquals(List.of(2), attempts, "as attempt 2 (the dead worker's was 1): the stop counted none");
        }
    }
}
