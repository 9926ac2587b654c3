package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class FlowStatusToStringTest {

    private static final UUID ID = UUID.fromString("00000000-0000-0000-0000-00000000000b");
    private static final Instant CREATED = Instant.parse("2026-12-03T05:00:00Z");

    private static UUID job(int n) { return new UUID(0, n); }

    @Test
    void aBatchPrintsItsStateAndPendingCountBesideItsCounts() {
        BatchStatus running = new BatchStatus(ID, false, false, 10, 3, 1, 0, List.of(job(1)),
                Set.of(BatchStatus.Callback.DEATH), CREATED);
        assertEquals("BatchStatus[id=" + ID + ", state=RUNNING, total=10, succeeded=3, deadLettered=1, cancelled=0, pending=6,"
                + " cancelRequested=false, fired=[DEATH], failedJobs=[" + job(1) + "], createdAt=2026-12-03T05:00:00Z]",
                running.toString());
    }

    @Test
    void aBatchPrintsItsCallbacksInDeclaredOrderAndOnlyItsFirstFailedJobs() {
        List<UUID> failed = IntStream.rangeClosed(1, 8).mapToObj(FlowStatusToStringTest::job).toList();
        BatchStatus ended = new BatchStatus(ID, false, true, 8, 0, 3, 5, failed,
                Set.of(BatchStatus.Callback.DEATH, BatchStatus.Callback.COMPLETE), CREATED);
        assertEquals("BatchStatus[id=" + ID + ", state=CANCELLED, total=8, succeeded=0, deadLettered=3, cancelled=5, pending=0,"
                + " cancelRequested=true, fired=[COMPLETE, DEATH], failedJobs=[" + job(1) + ", " + job(2) + ", " + job(3) + ", "
                + job(4) + ", " + job(5) + ", ... (3 more)], createdAt=2026-12-03T05:00:00Z]", ended.toString());
    }

    @Test
    void aWorkflowPrintsItsStateAndEachJobsState() {
        WorkflowStatus status = new WorkflowStatus(ID, false, CREATED, List.of(
                new WorkflowStatus.Node("fetch", job(1), "q", "fetch", WorkflowStatus.NodeState.SUCCEEDED, List.of()),
                new WorkflowStatus.Node("parse", job(2), "q", "parse", WorkflowStatus.NodeState.ENQUEUED, List.of("fetch")),
                new WorkflowStatus.Node("store", job(3), "q", "store", WorkflowStatus.NodeState.WAITING, List.of("parse"))));
        assertEquals("WorkflowStatus[id=" + ID + ", state=RUNNING, cancelRequested=false, jobs=3 {WAITING=1, ENQUEUED=1, SUCCEEDED=1},"
                + " nodes=[fetch=SUCCEEDED, parse=ENQUEUED, store=WAITING], createdAt=2026-12-03T05:00:00Z]", status.toString());
    }

    @Test
    void aLargeWorkflowPrintsItsFirstJobsAndHowManyMore() {
        List<WorkflowStatus.Node> nodes = new ArrayList<>();
        for (int i = 0; i < 23; i++) {
            nodes.add(new WorkflowStatus.Node("n" + i, job(i), "q", "t", WorkflowStatus.NodeState.SKIPPED, List.of()));
        }
        String printed = new WorkflowStatus(ID, true, CREATED, nodes).toString();
        assertTrue(printed.startsWith("WorkflowStatus[id=" + ID + ", state=CANCELLED, cancelRequested=true, jobs=23 {SKIPPED=23},"
                + " nodes=[n0=SKIPPED,"), printed);
        assertTrue(printed.endsWith(", n19=SKIPPED, ... (3 more)], createdAt=2026-12-03T05:00:00Z]"), printed);
    }
}
