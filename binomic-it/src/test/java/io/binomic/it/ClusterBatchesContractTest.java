package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.BatchStatus.Callback;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Settlement;
import io.binomic.core.BatchesContractTest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The batches contract on a Redis Cluster of 3 masters and 3 replicas, where a batch, its jobs' queues
 * and its callbacks' queue are in different hash slots; no command may be refused with
 * {@code CROSSSLOT}. Also: the last two jobs on queues of two slots settling at the same moment, and a
 * worker that died between a job's settlement and its count in the batch.
 */
@org.junit.jupiter.api.extension.ExtendWith(NoCrossSlotErrors.class)
class ClusterBatchesContractTest extends BatchesContractTest {
    @Override
    protected Broker createBroker() {
        return Brokers.redisCluster(RedisClusterSet.shared(), Map.of());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    private Batches batches() { return broker.capability(Batches.class).orElseThrow(); }

    /** A queue whose slot differs from {@code queue}'s (and the callbacks' queue's). */
    private String queueOfAnotherSlot() {
        RedisClusterSet cluster = RedisClusterSet.shared();
        long a = cluster.slotOf("{" + queue + "}");
        long b = cluster.slotOf("{" + otherQueue + "}");
        for (int i = 0; ; i++) {
            String q = queue + "-" + i;
            long slot = cluster.slotOf("{" + q + "}");
            if (slot != a && slot != b) {
                return q;
            }
        }
    }

    private static Settlement ended(Delivery d, String state) {
        JobUpdate update = new JobUpdate(d.queue(), d.message().orElseThrow().id(), Map.of(JobRecords.STATE, state), List.of(),
                Duration.ZERO, true);
        return state.equals("DEAD_LETTERED") ? new Settlement.DeadLetter(d, failure(), update) : new Settlement.Ack(d, update);
    }

    @Test
    void theLastTwoJobsOnQueuesOfTwoSlotsEndingAtOnceOnTwoWorkersEnqueueEachCallbackOnce() throws Exception {
        String second = queueOfAnotherSlot();
        assertNotEquals(RedisClusterSet.shared().slotOf("{" + queue + "}"), RedisClusterSet.shared().slotOf("{" + second + "}"));
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 20; round++) {
                UUID id = UUID.randomUUID();
                submit(false, List.of(job(id, queue), job(id, second)), id);
                Delivery a = broker.fetch(List.of(queue), "w1", 1, Duration.ofMillis(500)).getFirst();
                Delivery b = broker.fetch(List.of(second), "w2", 1, Duration.ofMillis(500)).getFirst();
                CyclicBarrier together = new CyclicBarrier(2);
                Future<?> fa = pool.submit(() -> {
                    together.await();
                    return broker.settle("w1", List.of(ended(a, "SUCCEEDED")));
                });
                Future<?> fb = pool.submit(() -> {
                    together.await();
                    return broker.settle("w2", List.of(ended(b, "SUCCEEDED")));
                });
                fa.get();
                fb.get();
                assertEquals(Map.of("on-SUCCESS", 1, "on-COMPLETE", 1), callbacksEnqueued(), "round " + round);
                BatchStatus status = batches().readBatch(id).orElseThrow();
                assertEquals(new BatchStatus(id, false, false, 2, 2, 0, 0, List.of(), Set.of(Callback.SUCCESS, Callback.COMPLETE),
                        status.createdAt()), status, "round " + round);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * The state a worker SIGKILLed right after its settle script leaves: the job settled and its
     * outcome in its queue's outbox, not counted in the batch. Any worker's sweep (here two brokers',
     * each sweeping once) counts it once and enqueues each callback once.
     */
    @Test
    void aJobSettledByAWorkerThatDiedBeforeCountingItIsCountedOnceBySweeps() throws Exception {
        UUID id = UUID.randomUUID();
        submit(false, jobs(id, queue, 1), id);
        Delivery d = broker.fetch(List.of(queue), "w1", 1, Duration.ofMillis(500)).getFirst();
        Message m = d.message().orElseThrow();
        // settled as the dead worker's settle script did it, the forwarding after it never run
        Delivery unbatched = Delivery.of(d.queue(), d.receipt(), m.toBuilder().batch(null).build(), d.deliveryCount());
        assertTrue(broker.settle("w1", List.of(ended(unbatched, "SUCCEEDED"))).allApplied());
        String outbox = "binomic:{" + queue + "}:batch-outbox";
        RedisClusterSet cluster = RedisClusterSet.shared();
        cluster.call(cluster.masterOf(outbox), "HSETNX", outbox, id + " " + m.id(), "S");
        assertEquals(Map.of(), callbacksEnqueued(), "not counted yet");
        assertEquals(0, batches().readBatch(id).orElseThrow().succeeded());

        for (int sweeper = 0; sweeper < 2; sweeper++) {
            try (Broker other = createBroker()) {
                other.start(List.of(queue));
                other.reclaim(queue, "sweeper-" + sweeper, Duration.ofMinutes(5), 10);
            }
        }
        assertEquals(Map.of("on-SUCCESS", 1, "on-COMPLETE", 1), callbacksEnqueued());
        assertEquals(1, batches().readBatch(id).orElseThrow().succeeded());
        assertEquals(0L, cluster.call(cluster.masterOf(outbox), "HLEN", outbox), "the outbox entry is removed once applied");
    }

    /** A job's outcome applied to its batch again (a second forwarder, a sweep after a crash) counts nothing and enqueues nothing. */
    @Test
    void anOutcomeForwardedAgainCountsNothingAndEnqueuesNothing() throws Exception {
        UUID id = UUID.randomUUID();
        submit(false, jobs(id, queue, 1), id);
        Delivery d = broker.fetch(List.of(queue), "w1", 1, Duration.ofMillis(500)).getFirst();
        assertTrue(broker.settle("w1", List.of(ended(d, "DEAD_LETTERED"))).allApplied());
        assertEquals(Map.of("on-DEATH", 1, "on-COMPLETE", 1), callbacksEnqueued());
        String outbox = "binomic:{" + queue + "}:batch-outbox";
        RedisClusterSet cluster = RedisClusterSet.shared();
        cluster.call(cluster.masterOf(outbox), "HSETNX", outbox, id + " " + d.message().orElseThrow().id(), "S");
        try (Broker other = createBroker()) {
            other.start(List.of(queue));
            other.reclaim(queue, "sweeper", Duration.ofMinutes(5), 10);
        }
        assertEquals(Map.of(), callbacksEnqueued());
        BatchStatus status = batches().readBatch(id).orElseThrow();
        assertEquals(List.of(1, 0), new ArrayList<>(List.of(status.deadLettered(), status.succeeded())));
    }

    /**
     * The state a process killed between a callback's claim and its enqueue leaves: the callback due
     * (here the completion callback of an open batch, put in its due hash by hand, as the claim puts
     * it), the batch in the due index since long enough. A sweep enqueues it once; the same entry due
     * again (killed between the enqueue and taking it off) is not enqueued again.
     */
    @Test
    void aCallbackLeftDueByAKilledProcessIsEnqueuedOnceBySweeps() throws Exception {
        UUID id = UUID.randomUUID();
        submit(true, jobs(id, queue, 1), id);
        RedisClusterSet cluster = RedisClusterSet.shared();
        String batch = "binomic:{binomic:flows}:batch:" + id;
        RedisClusterSet.Node flows = cluster.masterOf(batch);
        String delivery = (String) cluster.call(flows, "HGET", batch, "cbd:COMPLETE");
        for (int round = 0; round < 2; round++) {
            cluster.call(flows, "HSET", batch + ":due", "cb:COMPLETE", delivery, "n", "1");
            cluster.call(flows, "ZADD", "binomic:{binomic:flows}:due", "1", id.toString());
            try (Broker other = createBroker()) {
                other.start(List.of(queue));
                other.reclaim(queue, "sweeper-" + round, Duration.ofMinutes(5), 10);
            }
            assertEquals(round == 0 ? Map.of("on-COMPLETE", 1) : Map.of(), callbacksEnqueued(), "sweep " + round);
            assertEquals(0L, cluster.call(flows, "EXISTS", batch + ":due"), "nothing left due after sweep " + round);
            assertEquals(null, cluster.call(flows, "ZSCORE", "binomic:{binomic:flows}:due", id.toString()));
        }
    }
}
