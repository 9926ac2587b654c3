package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobHandle;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every broker with the {@link io.binomic.api.spi.JobStore} capability must have: the records of
 * tracked jobs, their events, cancels and expiry.
 */
public abstract class JobStoreContractTest extends BrokerContractFixture {

    protected JobStoreContractTest() {
    }

    @Test
    void aTrackedMessageHasAQueuedRecordAndAnUntrackedOneHasNone() throws Exception {
        Message tracked = trackedMessage("t", 60_000);
        Message untracked = message("t", "{}");
        broker.enqueueAll(List.of(tracked, untracked));

        Map<String, String> record = BrokerCapabilities.jobStore(broker).readJob(queue, tracked.id()).orElseThrow().fields();
        assertEquals("QUEUED", record.get(JobRecords.STATE));
        assertEquals("t", record.get(JobRecords.TASK));
        assertEquals("60000", record.get(JobRecords.RETENTION));
        assertEquals(Optional.empty(), BrokerCapabilities.jobStore(broker).readJob(queue, untracked.id()));
        assertEquals(2, fetch(10).size(), "tracking changes nothing about delivery");
    }

    @Test
    void aSettlementCarriesItsJobUpdateAndAnEndingOneNotifiesSubscribers() throws Exception {
        Message m = trackedMessage("t", 60_000);
        LinkedBlockingQueue<JobEvent> events = new LinkedBlockingQueue<>();
        try (AutoCloseable _ = BrokerCapabilities.jobStore(broker).subscribeJobEvents(queue, events::add)) {
            broker.enqueue(m);
            Delivery d = fetch(1).getFirst();
            assertEquals(Set.of(), BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING"), Duration.ZERO, false))));
            assertEquals("RUNNING", state(m));

            BrokerCapabilities.jobStore(broker).updateRunningJob(update(m, Map.of("progress", "50"), Duration.ZERO, false));
            assertEquals("50", BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().get("progress"));

            var done = update(m, Map.of(JobRecords.STATE, "SUCCEEDED", "result", "42"), Duration.ofMinutes(1), true);
            assertEquals(List.of(), broker.settle("c1", List.of(new Settlement.Ack(d, done))).notApplied());

            JobEvent event = events.poll(5, TimeUnit.SECONDS);
            assertEquals(new JobEvent(queue, m.id(), JobEvent.Kind.ENDED), event);
            Map<String, String> record = BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().fields();
            assertEquals("SUCCEEDED", record.get(JobRecords.STATE));
            assertEquals("42", record.get("result"));
            BrokerCapabilities.jobStore(broker).updateRunningJob(update(m, Map.of("progress", "99"), Duration.ZERO, false));
            assertEquals("50", BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().get("progress"), "progress only while running");
        }
    }

    @Test
    void aStaleSettlementChangesNoJobRecord() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        Delivery first = fetch(1).getFirst();
        Thread.sleep(30);
        assertEquals(1, broker.reclaim(queue, "c2", Duration.ofMillis(10), 10).size());

        var late = update(m, Map.of(JobRecords.STATE, "SUCCEEDED"), Duration.ofMinutes(1), true);
        assertEquals(1, broker.settle("c1", List.of(new Settlement.Ack(first, late))).notApplied().size());
        assertEquals("QUEUED", state(m), "the former owner's outcome is not the job's");
    }

    @Test
    void aCancelledQueuedJobIsNeverStartedAndStaysCancelled() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        var cancelled = update(m, Map.of(JobRecords.STATE, "CANCELLED"), Duration.ZERO, true);

        assertEquals(JobHandle.CancelOutcome.CANCELLED, BrokerCapabilities.jobStore(broker).cancelJob(cancelled));
        assertEquals("CANCELLED", state(m));
        fetch(1);
        assertEquals(Set.of(m.id()), BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING"), Duration.ZERO, false))));
        assertEquals("CANCELLED", state(m));
        assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, BrokerCapabilities.jobStore(broker).cancelJob(cancelled));
    }

    @Test
    void cancellingARunningJobAsksItsWorkerAndLeavesItRunning() throws Exception {
        Message m = trackedMessage("t", 60_000);
        LinkedBlockingQueue<JobEvent> events = new LinkedBlockingQueue<>();
        try (AutoCloseable _ = BrokerCapabilities.jobStore(broker).subscribeJobEvents(queue, events::add)) {
            broker.enqueue(m);
            fetch(1);
            BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING"), Duration.ZERO, false)));

            var cancelled = update(m, Map.of(JobRecords.STATE, "CANCELLED"), Duration.ZERO, true);
            assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, BrokerCapabilities.jobStore(broker).cancelJob(cancelled));

            assertEquals(new JobEvent(queue, m.id(), JobEvent.Kind.CANCEL_REQUESTED), events.poll(5, TimeUnit.SECONDS));
            Map<String, String> record = BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().fields();
            assertEquals("RUNNING", record.get(JobRecords.STATE));
            assertEquals("1", record.get(JobRecords.CANCEL_REQUESTED));
        }
    }

    @Test
    void cancellingAnUnknownJobSaysSoAndCreatesNothing() {
        Message m = trackedMessage("t", 60_000);
        var cancelled = update(m, Map.of(JobRecords.STATE, "CANCELLED"), Duration.ZERO, true);
        assertEquals(JobHandle.CancelOutcome.NOT_FOUND, BrokerCapabilities.jobStore(broker).cancelJob(cancelled));
        assertEquals(Optional.empty(), BrokerCapabilities.jobStore(broker).readJob(queue, m.id()));
    }

    @Test
    void anEndedJobsRecordExpiresAfterItsRetention() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        Delivery d = fetch(1).getFirst();
        broker.settle("c1", List.of(new Settlement.Ack(d, update(m, Map.of(JobRecords.STATE, "SUCCEEDED"), Duration.ofMillis(300), true))));
        assertEquals("SUCCEEDED", state(m));
        Thread.sleep(1_000);
        assertEquals(Optional.empty(), BrokerCapabilities.jobStore(broker).readJob(queue, m.id()));
    }

    @Test
    void aReplayedTrackedDeadLetterIsQueuedAgainAndRunsAgain() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        Delivery d = fetch(1).getFirst();
        broker.settle("c1", List.of(new Settlement.DeadLetter(d, failure(),
                update(m, Map.of(JobRecords.STATE, "DEAD_LETTERED"), Duration.ofMinutes(1), true))));
        assertEquals("DEAD_LETTERED", state(m));
        String letterId = BrokerCapabilities.deadLetterStore(broker).readDeadLetters(queue, Optional.empty(), 10).getFirst().id();

        assertEquals(1, BrokerCapabilities.deadLetterStore(broker).replayDeadLetters(queue, List.of(letterId)));
        assertEquals("QUEUED", state(m));
        fetch(1);
        assertEquals(Set.of(), BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING"), Duration.ZERO, false))));
    }

    @Test
    void aJobAskedToCancelWhileItsWorkerDiedEndsCancelledInsteadOfRunningAgain() throws Exception {
        Message m = trackedMessage("t", 60_000);
        LinkedBlockingQueue<JobEvent> events = new LinkedBlockingQueue<>();
        try (AutoCloseable _ = BrokerCapabilities.jobStore(broker).subscribeJobEvents(queue, events::add)) {
            broker.enqueue(m);
            fetch(1);
            BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "1"), Duration.ZERO, false)));
            var cancelled = update(m, Map.of(JobRecords.STATE, "CANCELLED"), Duration.ZERO, true);
            assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, BrokerCapabilities.jobStore(broker).cancelJob(cancelled));
            assertEquals(JobEvent.Kind.CANCEL_REQUESTED, events.poll(5, TimeUnit.SECONDS).kind());
            Thread.sleep(30);
            assertEquals(1, broker.reclaim(queue, "c2", Duration.ofMillis(10), 10).size(), "its worker died: reclaimed");

            Set<UUID> notStarted = BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "2"),
                    Duration.ZERO, false)));

            assertEquals(Set.of(m.id()), notStarted);
            assertEquals("CANCELLED", state(m));
            assertEquals(new JobEvent(queue, m.id(), JobEvent.Kind.ENDED), events.poll(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void anAttemptWhoseWorkerStoppedIsKeptInTheHistoryAsAbandoned() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        fetch(1);
        BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "1", "worker", "w1", "startedAt", "1000"),
                Duration.ZERO, false)));

        BrokerCapabilities.jobStore(broker).startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "2", "worker", "w2"), Duration.ZERO, false)));

        Map<String, String> record = BrokerCapabilities.jobStore(broker).readJob(queue, m.id()).orElseThrow().fields();
        assertEquals("2", record.get("attempt"));
        String[] first = record.get("a.1").split("\t");
        assertEquals("w1", first[0]);
        assertEquals("1000", first[1]);
        assertEquals("abandoned", first[3]);
    }

    /** A job cancelled while its worker ran it, whose worker then died: it ends CANCELLED, the attempt kept as abandoned. */
    @Test
    void aCancelledJobWhoseWorkerStoppedKeepsItsAttemptAsAbandoned() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        fetch(1);
        JobStore store = BrokerCapabilities.jobStore(broker);
        store.startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "1", "worker", "w1", "startedAt", "1000"),
                Duration.ZERO, false)));
        assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, store.cancelJob(update(m, Map.of(JobRecords.STATE, "CANCELLED"),
                Duration.ZERO, true)));

        assertEquals(Set.of(m.id()), store.startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "2", "worker", "w2"),
                Duration.ZERO, false))), "a cancelled job does not start again");

        Map<String, String> record = store.readJob(queue, m.id()).orElseThrow().fields();
        assertEquals("CANCELLED", record.get(JobRecords.STATE));
        String[] first = String.valueOf(record.get("a.1")).split("\t");
        assertEquals("w1", first[0], "attempt 1 is in the history: " + record);
        assertEquals("abandoned", first[3]);
    }

    /**
     * A start deletes the fields its update names that the record has (a former attempt's progress and note), and a
     * field it both sets and deletes, and keeps every other field.
     */
    @Test
    void aStartDeletesTheFieldsItsUpdateNamesAndKeepsTheRest() throws Exception {
        Message m = trackedMessage("t", 60_000);
        broker.enqueue(m);
        fetch(1);
        JobStore store = BrokerCapabilities.jobStore(broker);
        assertEquals(Set.of(), store.startJobs(List.of(update(m, Map.of(JobRecords.STATE, "RUNNING", "attempt", "1"), Duration.ZERO, false))));
        store.updateRunningJob(update(m, Map.of("progress", "50", "note", "half way"), Duration.ZERO, false));

        var second = new JobUpdate(queue, m.id(), Map.of(JobRecords.STATE, "RUNNING", "attempt", "2", "x", "1"),
                List.of("progress", "due", "note", "x"), Duration.ZERO, false);
        assertEquals(Set.of(), store.startJobs(List.of(second)));

        Map<String, String> record = store.readJob(queue, m.id()).orElseThrow().fields();
        assertEquals("RUNNING", record.get(JobRecords.STATE));
        assertEquals("2", record.get("attempt"));
        assertEquals("t", record.get(JobRecords.TASK), "kept: " + record);
        assertEquals("60000", record.get(JobRecords.RETENTION), "kept: " + record);
        assertFalse(record.containsKey("progress"), "deleted: " + record);
        assertFalse(record.containsKey("note"), "deleted: " + record);
        assertFalse(record.containsKey("due"), "never there: " + record);
        assertFalse(record.containsKey("x"), "set and deleted: " + record);
    }
}
