package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchNotFoundException;
import io.binomic.api.BatchStatus;
import io.binomic.api.BatchStatus.Callback;
import io.binomic.api.JobHandle;
import io.binomic.api.Task;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewBatch;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every broker with the {@link Batches} capability must have: an atomic submit, the
 * bookkeeping of each job's final settlement in the same step as the settlement, and each callback
 * enqueued exactly once, whatever the order, the resends and the reclaims.
 */
public abstract class BatchesContractTest extends BrokerContractFixture {

    protected BatchesContractTest() {
    }

    private Batches batches() { return BrokerCapabilities.of(broker, Batches.class); }

    /** A tracked job of batch {@code batch} on {@code q}. */
    protected static Message job(UUID batch, String q) {
        return Message.builder().id(UUID.randomUUID()).task("child").queue(q).enqueuedAt(Instant.now())
                .payload("{}".getBytes(StandardCharsets.UTF_8)).trackFor(Duration.ofMinutes(5)).batch(batch).build();
    }

    /** The three callbacks, on {@code otherQueue}, each its own task name. */
    protected Map<Callback, Message> callbacks(UUID batch) {
        Map<Callback, Message> all = new EnumMap<>(Callback.class);
        for (Callback c : Callback.values()) {
            all.put(c, Message.builder().id(UUID.randomUUID()).task("on-" + c).queue(otherQueue).enqueuedAt(Instant.now())
                    .payload("{}".getBytes(StandardCharsets.UTF_8)).batchCallback(batch).build());
        }
        return all;
    }

    protected UUID submit(boolean open, List<Message> jobs, UUID id) {
        batches().submitBatch(new NewBatch(id, open, Duration.ofMinutes(5), callbacks(id)), jobs);
        return id;
    }

    protected static List<Message> jobs(UUID batch, String q, int n) {
        List<Message> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(job(batch, q));
        }
        return out;
    }

    /** The callbacks enqueued so far (read off the callback queue), by task name. */
    protected Map<String, Integer> callbacksEnqueued() throws InterruptedException {
        Map<String, Integer> seen = new HashMap<>();
        for (Delivery d : broker.fetch(List.of(otherQueue), "cb", 100, Duration.ofMillis(100))) {
            seen.merge(d.message().orElseThrow().task(), 1, Integer::sum);
            broker.settle("cb", List.of(new Settlement.Ack(d)));
        }
        return seen;
    }

    private JobUpdate ended(Delivery d, String state) {
        return new JobUpdate(d.queue(), d.message().orElseThrow().id(), Map.of(JobRecords.STATE, state), List.of(), Duration.ZERO, true);
    }

    private Settlement succeeded(Delivery d) { return new Settlement.Ack(d, ended(d, "SUCCEEDED")); }

    private Settlement dead(Delivery d) { return new Settlement.DeadLetter(d, failure(), ended(d, "DEAD_LETTERED")); }

    private BatchStatus status(UUID id) { return batches().readBatch(id).orElseThrow(); }

    @Test
    void aBatchIsStoredWholeAcrossQueuesWithTheRecordsOfItsJobs() throws Exception {
        UUID id = UUID.randomUUID();
        List<Message> jobs = new ArrayList<>(jobs(id, queue, 3));
        jobs.add(job(id, otherQueue));
        submit(false, jobs, id);

        BatchStatus s = status(id);
        assertEquals(4, s.total());
        assertEquals(4, s.pending());
        assertEquals(BatchStatus.State.RUNNING, s.state());
        assertEquals("QUEUED", BrokerCapabilities.jobStore(broker).readJob(queue, jobs.getFirst().id()).orElseThrow()
                .get(JobRecords.STATE));
        assertEquals(3, fetch(10).size());
        assertEquals(1, broker.fetch(List.of(otherQueue), "c1", 10, Duration.ofMillis(100)).size());
        assertTrue(batches().readBatch(UUID.randomUUID()).isEmpty(), "an unknown batch has no status");
    }

    @Test
    void everyJobSucceededEnqueuesSuccessAndCompleteOnceAndNoDeath() throws Exception {
        UUID id = UUID.randomUUID();
        submit(false, jobs(id, queue, 3), id);
        List<Delivery> ds = fetch(10);
        broker.settle("c1", List.of(succeeded(ds.get(0)), succeeded(ds.get(1))));
        assertEquals(Map.of(), callbacksEnqueued(), "nothing before the last job ends");
        broker.settle("c1", List.of(succeeded(ds.get(2))));

        assertEquals(Map.of("on-SUCCESS", 1, "on-COMPLETE", 1), callbacksEnqueued());
        BatchStatus s = status(id);
        assertEquals(BatchStatus.State.SUCCEEDED, s.state());
        assertEquals(3, s.succeeded());
        assertEquals(Set.of(Callback.SUCCESS, Callback.COMPLETE), s.fired());
    }

    @Test
    void theFirstDeathEnqueuesDeathOnceAndTheBatchCompletesFailed() throws Exception {
        UUID id = UUID.randomUUID();
        submit(false, jobs(id, queue, 3), id);
        List<Delivery> ds = fetch(10);
        broker.settle("c1", List.of(dead(ds.get(0))));
        assertEquals(Map.of("on-DEATH", 1), callbacksEnqueued());
        broker.settle("c1", List.of(dead(ds.get(1)), succeeded(ds.get(2))));

        assertEquals(Map.of("on-COMPLETE", 1), callbacksEnqueued(), "no second death, no success");
        BatchStatus s = status(id);
        assertEquals(BatchStatus.State.FAILED, s.state());
        assertEquals(2, s.deadLettered());
        assertEquals(Set.of(ds.get(0).message().orElseThrow().id(), ds.get(1).message().orElseThrow().id()), Set.copyOf(s.failedJobs()));
    }

    @Test
    void aRetryIsNotAnEndAndAResentSettlementCountsNothing() throws Exception {
        UUID id = UUID.randomUUID();
        submit(false, jobs(id, queue, 2), id);
        List<Delivery> ds = fetch(10);
        Delivery first = ds.get(0);
        broker.settle("c1", List.of(new Settlement.RetryLater(first, first.message().orElseThrow().withAttempt(2, Instant.now()),
                Instant.now().plusSeconds(600))));
        assertEquals(2, status(id).pending(), "a retry is not a final outcome");

        Settlement last = succeeded(ds.get(1));
        assertTrue(broker.settle("c1", List.of(last)).allApplied());
        var again = broker.settle("c1", List.of(last));
        assertEquals(List.of(last), again.notPending(), "the resend is reported not pending");
        assertEquals(1, status(id).succeeded(), "and counts nothing");
        assertEquals(Map.of(), callbacksEnqueued());
    }

    @Test
    void aReclaimedJobIsCountedOnceByItsNewOwnerAndNeverByItsOldOne() throws Exception {
        UUID id = UUID.randomUUID();
        submit(false, jobs(id, queue, 1), id);
        Delivery old = fetch(1).getFirst();
        Delivery taken = broker.reclaim(queue, "c2", Duration.ZERO, 10).getFirst();

        assertEquals(List.of(), broker.settle("c1", List.of(dead(old))).notPending());
        assertEquals(0, status(id).deadLettered(), "a stale settlement counts nothing");
        assertTrue(broker.settle("c2", List.of(succeeded(taken))).allApplied());
        assertTrue(broker.settle("c2", List.of(succeeded(taken))).notPending().size() == 1);

        assertEquals(Map.of("on-SUCCESS", 1, "on-COMPLETE", 1), callbacksEnqueued());
        assertEquals(1, status(id).succeeded());
    }

    @Test
    void twoWorkersEndingTheLastTwoJobsAtOnceEnqueueCompleteOnce() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 20; round++) {
                UUID id = UUID.randomUUID();
                submit(false, jobs(id, queue, 2), id);
                Delivery a = broker.fetch(List.of(queue), "w1", 1, Duration.ofMillis(200)).getFirst();
                Delivery b = broker.fetch(List.of(queue), "w2", 1, Duration.ofMillis(200)).getFirst();
                CyclicBarrier together = new CyclicBarrier(2);
                Future<?> fa = pool.submit(() -> {
                    together.await();
                    return broker.settle("w1", List.of(succeeded(a)));
                });
                Future<?> fb = pool.submit(() -> {
                    together.await();
                    return broker.settle("w2", List.of(dead(b)));
                });
                fa.get();
                fb.get();
                assertEquals(Map.of("on-DEATH", 1, "on-COMPLETE", 1), callbacksEnqueued(), "round " + round);
                assertEquals(new BatchStatus(id, false, false, 2, 1, 1, 0, List.of(b.message().orElseThrow().id()),
                        Set.of(Callback.DEATH, Callback.COMPLETE), status(id).createdAt()), status(id));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void anOpenBatchGrowsAndCompletesOnlyOnceClosed() throws Exception {
        UUID id = UUID.randomUUID();
        submit(true, jobs(id, queue, 1), id);
        broker.settle("c1", List.of(succeeded(fetch(1).getFirst())));
        assertEquals(Map.of(), callbacksEnqueued(), "open: not complete though every job ended");
        assertEquals(BatchStatus.State.OPEN, status(id).state());

        assertTrue(batches().addToBatch(id, jobs(id, queue, 1)));
        assertEquals(2, status(id).total());
        broker.settle("c1", List.of(succeeded(fetch(1).getFirst())));
        assertEquals(Map.of(), callbacksEnqueued());

        assertTrue(batches().closeBatch(id));
        assertEquals(Map.of("on-SUCCESS", 1, "on-COMPLETE", 1), callbacksEnqueued(), "the close completes it");
        assertTrue(batches().closeBatch(id));
        assertEquals(Map.of(), callbacksEnqueued(), "a second close fires nothing");
        assertFalse(batches().addToBatch(id, jobs(id, queue, 1)), "a closed batch takes no job");
        assertEquals(2, status(id).total());
        assertFalse(batches().closeBatch(UUID.randomUUID()), "no such batch");
    }

    /** A client on the fixture's broker, which the fixture started and closes: every capability the broker's own. */
    private Binomic client(Task<?, ?> task) {
        Broker shared = new ForwardingBroker(broker) {
            @Override
            public void start(List<String> queues) {
            }

            @Override
            public void close() {
            }

            @Override
            public <T> Optional<T> capability(Class<T> type) {
                return delegate.capability(type);
            }
        };
        return Binomic.builder().broker(shared).scheduler(scheduler).task(task).build().start();
    }

    /**
     * A batch the broker does not know (a wrong id, or one past its retention) takes no job and no
     * close, and creates nothing; its handle says so with one exception naming the id, where its
     * cancel returns NOT_FOUND and its status is empty.
     */
    @Test
    void anUnknownBatchTakesNoJobNorCloseAndItsHandleSaysItIsNotFound() throws Exception {
        UUID unknown = UUID.randomUUID();
        Message refused = job(unknown, queue);
        assertFalse(batches().addToBatch(unknown, List.of(refused)), "no such batch");
        assertFalse(batches().closeBatch(unknown), "no such batch");
        assertEquals(Map.of(), batches().cancelBatch(unknown));
        assertEquals(Optional.empty(), batches().readBatch(unknown), "nothing created for it");
        assertEquals(Optional.empty(), BrokerCapabilities.jobStore(broker).readJob(queue, refused.id()), "no record of the job");

        Task<String, Void> child = Task.builder("child", String.class).queue(queue).build();
        try (Binomic binomic = client(child)) {
            BatchHandle handle = binomic.batch(unknown);
            BatchNotFoundException add = assertThrows(BatchNotFoundException.class, () -> handle.add(child, "late"));
            assertEquals(unknown, add.batchId());
            assertTrue(add.getMessage().contains("no batch " + unknown), add.getMessage());
            BatchNotFoundException close = assertThrows(BatchNotFoundException.class, handle::close);
            assertEquals(unknown, close.batchId());
            assertTrue(close.getMessage().contains("no batch " + unknown), close.getMessage());
            assertEquals(JobHandle.CancelOutcome.NOT_FOUND, handle.cancel());
            assertEquals(Optional.empty(), handle.status());
        }
        assertEquals(List.of(), fetch(1), "nothing enqueued for it");
    }

    /** A job added to a batch that is known but closed is refused as closed, not as unknown; nothing is added. */
    @Test
    void aJobAddedToAClosedBatchIsRefusedAsClosed() throws Exception {
        UUID id = UUID.randomUUID();
        submit(false, jobs(id, queue, 1), id);
        Task<String, Void> child = Task.builder("child", String.class).queue(queue).build();
        try (Binomic binomic = client(child)) {
            BatchHandle handle = binomic.batch(id);
            IllegalStateException add = assertThrows(IllegalStateException.class, () -> handle.add(child, "late"));
            assertTrue(add.getMessage().contains("batch " + id + " is closed"), add.getMessage());
            assertFalse(add.getMessage().contains("unknown"), add.getMessage());
            assertFalse(handle.close(), "closed at its submit");
        }
        assertEquals(1, status(id).total(), "nothing added");
    }

    /** A client resends an add whose reply it lost: the jobs it had added are neither enqueued nor counted again. */
    @Test
    void aResentAddOfTheSameJobsAddsNothingAndTheBatchStillCompletes() throws Exception {
        UUID id = UUID.randomUUID();
        submit(true, jobs(id, queue, 1), id);
        List<Message> added = jobs(id, queue, 1);
        assertTrue(batches().addToBatch(id, added));
        broker.settle("c1", List.of(succeeded(fetch(1).getFirst())));
        broker.settle("c1", List.of(succeeded(fetch(1).getFirst())));

        assertTrue(batches().addToBatch(id, added), "the batch is open: the resend is taken, as the first was");
        assertEquals(2, status(id).total(), status(id).toString());
        assertEquals(List.of(), fetch(1), "the resent job was not enqueued again");
        assertTrue(batches().closeBatch(id));
        assertEquals(Map.of("on-SUCCESS", 1, "on-COMPLETE", 1), callbacksEnqueued(), "both jobs ended: the close completes it");
        assertEquals(BatchStatus.State.SUCCEEDED, status(id).state());
    }

    @Test
    void aCancelledBatchListsItsUnfinishedJobsAndCountsATrackedJobAckedUnrunAsCancelled() throws Exception {
        UUID id = UUID.randomUUID();
        List<Message> jobs = jobs(id, queue, 2);
        submit(false, jobs, id);
        List<Delivery> ds = fetch(10);
        broker.settle("c1", List.of(succeeded(ds.get(0))));

        Map<UUID, String> unfinished = batches().cancelBatch(id);
        assertEquals(Map.of(ds.get(1).message().orElseThrow().id(), queue), unfinished);
        assertTrue(status(id).cancelRequested());
        // the worker found the record cancelled and did not run it: an ack without an update
        broker.settle("c1", List.of(new Settlement.Ack(ds.get(1))));

        BatchStatus s = status(id);
        assertEquals(1, s.cancelled());
        assertEquals(BatchStatus.State.CANCELLED, s.state(), "cancelled as a whole, as binomic_batches counts it");
        assertEquals(Map.of("on-COMPLETE", 1), callbacksEnqueued());
        assertEquals(Map.of(), batches().cancelBatch(UUID.randomUUID()));
    }

    /**
     * The cancel marks every job not ended in the same step: a worker that fetched one before the
     * cancel cannot start it after, whatever the order in which the per-job cancels then arrive.
     */
    @Test
    void aCancelledBatchsJobsCannotStartAndAnEndedBatchIsLeftAsItEnded() throws Exception {
        UUID id = UUID.randomUUID();
        submit(false, jobs(id, queue, 2), id);
        List<Delivery> ds = fetch(10);
        batches().cancelBatch(id);

        var store = BrokerCapabilities.jobStore(broker);
        UUID first = ds.get(0).message().orElseThrow().id();
        JobUpdate start = new JobUpdate(queue, first, Map.of(JobRecords.STATE, "RUNNING"), List.of(), Duration.ZERO, false);
        assertEquals(Set.of(first), store.startJobs(List.of(start)), "a job of a cancelled batch does not start");
        assertEquals("CANCELLED", store.readJob(queue, first).orElseThrow().get(JobRecords.STATE));

        UUID ended = UUID.randomUUID();
        submit(false, jobs(ended, queue, 1), ended);
        broker.settle("c1", List.of(succeeded(fetch(1).getFirst())));
        BatchStatus done = status(ended);
        assertEquals(Map.of(), batches().cancelBatch(ended));
        assertEquals(done, status(ended), "cancelling an ended batch changes nothing");
        assertEquals(BatchStatus.State.SUCCEEDED, status(ended).state());
    }

    @Test
    void aReplayedDeadLetterThatSucceedsIsNotCountedAgain() throws Exception {
        UUID id = UUID.randomUUID();
        submit(false, jobs(id, queue, 1), id);
        broker.settle("c1", List.of(dead(fetch(1).getFirst())));
        assertEquals(Map.of("on-DEATH", 1, "on-COMPLETE", 1), callbacksEnqueued());

        var store = BrokerCapabilities.deadLetterStore(broker);
        String letter = store.readDeadLetters(queue, java.util.Optional.empty(), 10).getFirst().id();
        assertEquals(1, store.replayDeadLetters(queue, List.of(letter)));
        Delivery again = fetch(1).getFirst();
        assertTrue(broker.settle("c1", List.of(succeeded(again))).allApplied(), "the replayed run settles");

        BatchStatus s = status(id);
        assertEquals(List.of(1, 0, 1), List.of(s.total(), s.succeeded(), s.deadLettered()), "a job counts once, at its first end");
        assertEquals(Map.of(), callbacksEnqueued(), "no callback again");
    }

    /** {@code before} moved by the given numbers: the counts are the broker's, so a test compares what it changed. */
    static FlowCounts plus(FlowCounts before, long open, long succeeded, long failed, long cancelled) {
        return new FlowCounts(before.open() + open, before.succeeded() + succeeded, before.failed() + failed,
                before.cancelled() + cancelled);
    }

    @Test
    void theBrokerWideCountsMoveOnceWithEachSubmitAndEachEnd() throws Exception {
        FlowCounts before = batches().counts();
        UUID ok = UUID.randomUUID();
        UUID bad = UUID.randomUUID();
        UUID stopped = UUID.randomUUID();
        for (UUID id : List.of(ok, bad, stopped)) {
            submit(false, jobs(id, queue, 1), id);
        }
        assertEquals(plus(before, 3, 0, 0, 0), batches().counts(), "three open");

        Map<UUID, Delivery> byBatch = new HashMap<>();
        fetch(10).forEach(d -> byBatch.put(d.message().orElseThrow().batch(), d));
        broker.settle("c1", List.of(succeeded(byBatch.get(ok)), dead(byBatch.get(bad))));
        batches().cancelBatch(stopped);
        broker.settle("c1", List.of(new Settlement.Ack(byBatch.get(stopped)))); // acked unrun: its record said cancelled
        assertEquals(plus(before, 0, 1, 1, 1), batches().counts());

        assertFalse(broker.settle("c1", List.of(succeeded(byBatch.get(ok)), dead(byBatch.get(bad)))).allApplied());
        assertTrue(batches().closeBatch(ok));
        assertEquals(Map.of(), batches().cancelBatch(stopped));
        assertEquals(plus(before, 0, 1, 1, 1), batches().counts(), "resent settlements, a second close or cancel count nothing");
    }

    @Test
    void anOpenBatchIsCountedOpenUntilItsCloseEndsIt() throws Exception {
        FlowCounts before = batches().counts();
        UUID id = submit(true, List.of(), UUID.randomUUID());
        assertTrue(batches().addToBatch(id, jobs(id, queue, 1)));
        broker.settle("c1", List.of(succeeded(fetch(1).getFirst())));
        assertEquals(plus(before, 1, 0, 0, 0), batches().counts(), "open while jobs may be added");

        assertTrue(batches().closeBatch(id));
        assertEquals(plus(before, 0, 1, 0, 0), batches().counts());
    }

    @Test
    void aJobOfNoBatchSettlesAsBefore() throws Exception {
        Message plain = message("t", "{}");
        broker.enqueue(plain);
        assertTrue(broker.settle("c1", List.of(new Settlement.Ack(fetch(1).getFirst()))).allApplied());
    }
}
