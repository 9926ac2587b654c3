package io.binomic.core.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.WorkerCounters;
import io.binomic.core.WorkerHealth;
import io.binomic.core.internal.FlowStats;
import io.binomic.core.internal.StatsRecorder;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkerSlotsTest {
    private static final long OUR_PID = ProcessHandle.current().pid();

    @TempDir
    Path dir;

    private WorkerSlots create(Path file, int slots) {
        return WorkerSlots.create(file, slots, OUR_PID, Instant.ofEpochMilli(1_000), Duration.ofMillis(200),
                Duration.ofSeconds(1));
    }

    @Test
    void slotFieldsWrittenThroughOneMappingAreReadThroughAnother() {
        Path file = dir.resolve("w.slots");
        try (WorkerSlots master = create(file, 3); WorkerSlots worker = WorkerSlots.open(file)) {
            WorkerSlots.Slot written = worker.slot(2);
            written.pid(4242);
            written.state(WorkerState.DRAINING);
            written.counters(new WorkerCounters(1, 2, 3, 4, 5, 6));
            written.health(new WorkerHealth(WorkerHealth.State.STALLED, Duration.ofSeconds(9), Duration.ZERO, 0,
                    Optional.of("fetch loop stopped: RedisTimeoutException after 3 attempts")));
            written.heartbeat(123_456);
            master.slot(2).command(WorkerCommand.STOP);
            master.slot(2).supervision(Supervision.STOPPING_NOT_CONSUMING, 777);

            SlotSnapshot read = master.slot(2).snapshot();
            assertEquals(new SlotSnapshot(2, 4242, 123_456, 1, WorkerState.DRAINING, WorkerCommand.STOP,
                    new WorkerCounters(1, 2, 3, 4, 5, 6), SlotHealth.NOT_CONSUMING, Optional.of("fetch loop stopped: RedisTimeoutException after 3 attempts"),
                    Supervision.STOPPING_NOT_CONSUMING, 777), read);
            assertEquals(WorkerCommand.STOP, worker.slot(2).command());
            assertEquals(WorkerState.EMPTY, master.slot(1).state(), "neighbouring slots are untouched");
        }
    }

    @Test
    void headerCarriesMasterPidAndTimings() {
        Path file = dir.resolve("w.slots");
        try (WorkerSlots master = create(file, 2); WorkerSlots reader = WorkerSlots.openReadOnly(file)) {
            assertEquals(master.slotCount(), reader.slotCount());
            assertEquals(OUR_PID, reader.masterPid());
            assertEquals(Instant.ofEpochMilli(1_000), reader.masterStartedAt());
            assertEquals(Duration.ofMillis(200), reader.heartbeatInterval());
            assertEquals(Duration.ofSeconds(1), reader.heartbeatTimeout());
        }
    }

    @Test
    void eachSlotIsSixCacheLinesAfterTheHeader() throws IOException {
        Path file = dir.resolve("w.slots");
        try (WorkerSlots slots = create(file, 5)) {
            assertEquals(64L + 384L * slots.slotCount(), Files.size(file));
        }
    }

    @Test
    void resetClearsEverythingAPreviousWorkerLeft() {
        Path file = dir.resolve("w.slots");
        try (WorkerSlots slots = create(file, 1)) {
            WorkerSlots.Slot slot = slots.slot(0);
            slot.pid(7);
            slot.heartbeat(99);
            slot.state(WorkerState.RUNNING);
            slot.command(WorkerCommand.DRAIN);
            slot.counters(new WorkerCounters(9, 9, 9, 9, 9, 9, 9, 9));
            slot.health(new WorkerHealth(WorkerHealth.State.STALLED, Duration.ZERO, Duration.ZERO, 0, Optional.of("stuck")));
            slot.supervision(Supervision.RESTART_PENDING, 1234);
            slot.callbackLag(new WorkerSlots.CallbackLag(LongStream.range(1, 16).toArray(), 77));
            slot.reset();
            assertEquals(0, slot.callbackLag().count());
            assertEquals(0, slot.callbackLag().sumNanos());
            assertEquals(new SlotSnapshot(0, 0, 0, 0, WorkerState.EMPTY, WorkerCommand.NONE, new WorkerCounters(0, 0, 0, 0, 0, 0),
                    SlotHealth.UNKNOWN, Optional.empty(), Supervision.WATCHED, 0), slot.snapshot());
        }
    }

    @Test
    void aWorkersCallbackLagsSumOverItsQueuesAndTasksIntoItsSlotForTheMasterToRead() {
        Path file = dir.resolve("w.slots");
        try (WorkerSlots master = create(file, 2); WorkerSlots worker = WorkerSlots.open(file)) {
            FlowStats flows = new FlowStats();
            flows.callbackStarted("reports", "report", Duration.ofMillis(3));     // under the first bound, 5 ms
            flows.callbackStarted("reports", "report", Duration.ofMillis(40));    // under 50 ms
            flows.callbackStarted("audit", "summary", Duration.ofSeconds(400));   // over every bound
            worker.slot(1).callbackLag(WorkerSlots.CallbackLag.sumOf(flows.callbackLags()));

            WorkerSlots.CallbackLag read = master.slot(1).callbackLag();
            assertEquals(3, read.count());
            assertEquals(List.of(1L, 1L, 1L, 2L), LongStream.of(read.cumulative()).limit(4).boxed().toList(), "le 5 ms, 10 ms, 25 ms, 50 ms");
            assertEquals(2, read.cumulative()[StatsRecorder.BUCKET_SECONDS.length - 1], "le 300 s");
            assertEquals(Duration.ofMillis(400_043).toNanos(), read.sumNanos());
            assertEquals(0, master.slot(0).callbackLag().count(), "another slot's are its own");
        }
    }

    @Test
    void eachHeartbeatAdvancesTheSequenceTheMasterWatches() {
        try (WorkerSlots slots = create(dir.resolve("w.slots"), 1)) {
            WorkerSlots.Slot slot = slots.slot(0);
            slot.heartbeat(5_000);
            slot.heartbeat(1_000); // a wall clock stepped back: the sequence still moves on
            assertEquals(2, slot.heartbeatSequence());
            assertEquals(1_000, slot.heartbeatMillis());
        }
    }

    /** "a reclaim has not returned for 9" was what `binomic workers` showed of a 95 s reclaim: the reason is kept whole. */
    @Test
    void theLongestReasonTheHealthCheckGivesIsKeptWhole() {
        try (WorkerSlots slots = create(dir.resolve("w.slots"), 2)) {
            String reason = "a periodic broker call (paused state, limits, consumers) has not returned for 95 s";
            slots.slot(0).health(new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, Duration.ZERO, Duration.ZERO, 0, Optional.of(reason)));
            slots.slot(1).health(new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, Duration.ZERO, Duration.ZERO, 0,
                    Optional.of("fetching has failed for 12 s: " + "x".repeat(200))));

            assertEquals(Optional.of(reason), slots.slot(0).problem());
            assertEquals(WorkerSlots.PROBLEM_BYTES, slots.slot(1).problem().orElseThrow().length(), "a longer one is cut");
            assertTrue(slots.slot(1).problem().orElseThrow().startsWith("fetching has failed for 12 s: xxx"));
            assertTrue(slots.slot(1).problem().orElseThrow().endsWith("x..."), "and says it was cut");
        }
    }

    /** 96 bytes cut the broker's address off a refused connection, the part an operator acts on. */
    @Test
    void theBrokersErrorAfterTheHealthChecksWordsKeepsWhereItFailed() {
        try (WorkerSlots slots = create(dir.resolve("w.slots"), 1)) {
            String reason = "writing outcomes has failed for 37 s: Unable to connect to Redis server:"
                    + " redis-primary.prod.example.internal/10.120.33.7:6379";
            slots.slot(0).health(new WorkerHealth(WorkerHealth.State.BROKER_UNREACHABLE, Duration.ZERO, Duration.ZERO, 3, Optional.of(reason)));

            assertEquals(Optional.of(reason), slots.slot(0).problem());
        }
    }

    @Test
    void heldOutcomesGoThroughTheSlot() {
        try (WorkerSlots slots = create(dir.resolve("w.slots"), 1)) {
            slots.slot(0).counters(new WorkerCounters(0, 10, 1, 1, 0, 0, 4, 3));

            assertEquals(new WorkerCounters(0, 10, 1, 1, 0, 0, 4, 3), slots.slot(0).counters());
            assertEquals(7, slots.slot(0).counters().writtenSucceeded());
        }
    }

    @Test
    void aConsumingWorkerClearsTheProblemItReportedBefore() {
        try (WorkerSlots slots = create(dir.resolve("w.slots"), 1)) {
            WorkerSlots.Slot slot = slots.slot(0);
            slot.health(new WorkerHealth(WorkerHealth.State.STALLED, Duration.ZERO, Duration.ZERO, 0, Optional.of("caf\u00e9 down")));
            assertEquals(Optional.of("caf? down"), slot.problem(), "non-ASCII is replaced, not mangled");
            slot.health(new WorkerHealth(WorkerHealth.State.CONSUMING, Duration.ZERO, Duration.ZERO, 0, Optional.empty()));
            assertEquals(SlotHealth.CONSUMING, slot.health());
            assertEquals(Optional.empty(), slot.problem());
        }
    }

    @Test
    void aFileThatIsNotASegmentIsRefusedWithItsName() throws IOException {
        Path file = dir.resolve("not-a-segment");
        Files.write(file, new byte[256]);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> WorkerSlots.openReadOnly(file));
        assertTrue(e.getMessage().contains("not-a-segment") && e.getMessage().contains("not a Binomic worker segment"),
                e.getMessage());
    }

    @Test
    void aSegmentOfALiveMasterIsNotReplaced() {
        Path file = dir.resolve("w.slots");
        long otherLivePid = ProcessHandle.current().parent().orElseThrow().pid();
        try (WorkerSlots other = WorkerSlots.create(file, 1, otherLivePid, Instant.now(), Duration.ofSeconds(1),
                Duration.ofSeconds(3))) {
            assertEquals(otherLivePid, other.masterPid());
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> create(file, 1));
            assertTrue(e.getMessage().contains("master pid " + otherLivePid), e.getMessage());
        }
    }

    @Test
    void aSegmentOfADeadMasterIsReplaced() {
        Path file = dir.resolve("w.slots");
        long deadPid = Long.MAX_VALUE; // no such process
        try (WorkerSlots old = WorkerSlots.create(file, 1, deadPid, Instant.now(), Duration.ofSeconds(1), Duration.ofSeconds(3))) {
            old.slot(0).pid(5);
        }
        try (WorkerSlots fresh = create(file, 2)) {
            assertEquals(OUR_PID, fresh.masterPid());
            assertEquals(0, fresh.slot(0).pid());
        }
    }

    @Test
    void slotCountOutOfRangeIsRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> create(dir.resolve("x"), 0));
        assertTrue(e.getMessage().startsWith("slotCount"), e.getMessage());
    }
}
