package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.it.ChaosFlowCheck.PlannedBatch;
import io.binomic.it.ChaosFlowCheck.PlannedWorkflow;
import io.binomic.it.ChaosReport.Fault;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The verdicts of the chaos suite's batch and workflow checks on hand-built ledgers: each must be able to fail a run. */
class ChaosFlowCheckTest {
    private static final long WORKER = 101;
    private static final long OTHER = 202;
    private static final UUID BATCH = UUID.randomUUID();
    private static final UUID WORKFLOW = UUID.randomUUID();
    private static final PlannedBatch PLANNED_BATCH = new PlannedBatch(BATCH, "b0", List.of("j0", "j1", "doomed"), true);
    private static final Map<String, List<String>> DIAMOND = new LinkedHashMap<>(Map.of("a", List.of(), "b", List.of("a"),
            "c", List.of("a"), "d", List.of("b", "c")));
    private static final PlannedWorkflow PLANNED_WORKFLOW = new PlannedWorkflow(WORKFLOW, "w0", DIAMOND);

    private final List<String> lines = new ArrayList<>();
    private final List<Fault> faults = new ArrayList<>();
    private UUID doomedId;

    /** One execution: its S line, and an E line ({@code end} >= 0) or an F line ({@code failedAt} >= 0). */
    private UUID run(char kind, UUID group, String flow, String node, UUID id, int attempt, long pid, long start, long end,
                     long failedAt, String summary) {
        lines.add("S " + kind + " " + group + " " + id + " " + attempt + " " + pid + " " + start + " " + flow + " " + node + " " + summary);
        if (end >= 0) {
            lines.add("E " + id + " " + attempt + " " + pid + " " + start + " " + end);
        }
        if (failedAt >= 0) {
            lines.add("F " + id + " " + attempt + " " + pid + " " + start + " " + failedAt);
        }
        return id;
    }

    /** A batch of two jobs and one that is dead-lettered, its COMPLETE and DEATH callbacks, and a diamond, all in order. */
    private void wellBehaved() {
        run('J', BATCH, "b0", "j0", UUID.randomUUID(), 1, WORKER, 1_000, 1_030, -1, "-");
        UUID j1 = UUID.randomUUID();
        run('J', BATCH, "b0", "j1", j1, 1, WORKER, 1_000, -1, 1_020, "-");
        run('J', BATCH, "b0", "j1", j1, 2, OTHER, 1_400, 1_450, -1, "-");
        doomedId = UUID.randomUUID();
        run('J', BATCH, "b0", "doomed", doomedId, 1, WORKER, 1_000, -1, 1_010, "-");
        run('J', BATCH, "b0", "doomed", doomedId, 2, OTHER, 1_320, -1, 1_330, "-");
        run('C', BATCH, "b0", "cb-DEATH", UUID.randomUUID(), 1, WORKER, 1_340, 1_350, -1, "3/1/1/0");
        run('C', BATCH, "b0", "cb-COMPLETE", UUID.randomUUID(), 1, OTHER, 1_460, 1_470, -1, "3/2/1/0");
        run('N', WORKFLOW, "w0", "a", UUID.randomUUID(), 1, WORKER, 2_000, 2_010, -1, "-");
        run('N', WORKFLOW, "w0", "b", UUID.randomUUID(), 1, WORKER, 2_020, 2_030, -1, "-");
        run('N', WORKFLOW, "w0", "c", UUID.randomUUID(), 1, OTHER, 2_021, 2_040, -1, "-");
        run('N', WORKFLOW, "w0", "d", UUID.randomUUID(), 1, OTHER, 2_045, 2_050, -1, "-");
    }

    private ChaosFlowCheck check() {
        return check("SUCCEEDED");
    }

    private ChaosFlowCheck check(String workflowState) {
        ChaosReport report = new ChaosReport(List.of(), new byte[0], new BitSet(), faults, 5_000, 16, 0, 2_000, 0, 0);
        return new ChaosFlowCheck(ChaosFlowLedger.parse(lines), List.of(PLANNED_BATCH), List.of(PLANNED_WORKFLOW), Set.of(),
                Set.of(doomedId), Map.of(WORKFLOW, workflowState), report::cause);
    }

    private static void assertFails(ChaosFlowCheck check, String expected) {
        assertTrue(check.failures.stream().anyMatch(f -> f.contains(expected)), "expected a failure with '" + expected + "': "
                + check.failures);
    }

    @Test
    void aWellBehavedLedgerPasses() {
        wellBehaved();
        ChaosFlowCheck check = check();
        assertEquals(List.of(), check.failures);
        assertEquals(Map.of("COMPLETE", 1, "DEATH", 1), check.callbacks);
        assertEquals(1, check.deadLettered);
        assertEquals(1, check.workflowsSucceeded);
    }

    @Test
    void aCallbackFromTwoMessagesWasEnqueuedTwice() {
        wellBehaved();
        run('C', BATCH, "b0", "cb-COMPLETE", UUID.randomUUID(), 1, WORKER, 1_500, 1_510, -1, "3/2/1/0");
        assertFails(check(), "callback COMPLETE ENQUEUED 2 times");
    }

    @Test
    void aCallbackThatRanTwiceFromOneMessageIsADuplicateOnlyAKillOfItsJvmExplains() {
        wellBehaved();
        UUID callback = UUID.randomUUID();
        lines.removeIf(l -> l.contains("cb-COMPLETE"));
        run('C', BATCH, "b0", "cb-COMPLETE", callback, 1, WORKER, 1_460, 1_470, -1, "3/2/1/0");
        run('C', BATCH, "b0", "cb-COMPLETE", callback, 2, OTHER, 9_000, 9_010, -1, "3/2/1/0");
        ChaosFlowCheck unexplained = check();
        assertFails(unexplained, "UNEXPLAINED duplicate: b0/cb-COMPLETE");
        assertEquals(Map.of("callback UNEXPLAINED", 1), unexplained.duplicatesByCause);

        faults.add(new Fault("SIGKILL", WORKER, 1_600, 1_600, "killed before the ack was surely written"));
        ChaosFlowCheck explained = check();
        assertEquals(List.of(), explained.failures);
        assertEquals(Map.of("callback SIGKILL", 1), explained.duplicatesByCause);
    }

    @Test
    void aCallbackThatStartedBeforeTheLastJobEndedFails() {
        wellBehaved();
        lines.removeIf(l -> l.contains("cb-COMPLETE"));
        run('C', BATCH, "b0", "cb-COMPLETE", UUID.randomUUID(), 1, OTHER, 1_440, 1_470, -1, "3/2/1/0");
        assertFails(check(), "callback COMPLETE started 10 ms before the end of the batch's last job");
    }

    @Test
    void aDeathCallbackBeforeTheDeadLetterFails() {
        wellBehaved();
        lines.removeIf(l -> l.contains("cb-DEATH"));
        run('C', BATCH, "b0", "cb-DEATH", UUID.randomUUID(), 1, WORKER, 1_325, 1_350, -1, "3/1/1/0");
        assertFails(check(), "callback DEATH started 5 ms before the end of the first dead-lettered job");
    }

    @Test
    void aSummaryOtherThanTheLedgersFails() {
        wellBehaved();
        lines.removeIf(l -> l.contains("cb-COMPLETE"));
        run('C', BATCH, "b0", "cb-COMPLETE", UUID.randomUUID(), 1, OTHER, 1_460, 1_470, -1, "3/3/0/0");
        assertFails(check(), "saw the summary 3/3/0/0");
    }

    @Test
    void aCallbackTheOutcomeDoesNotCallForFails_andOneNeverRunIsLost() {
        wellBehaved();
        run('C', BATCH, "b0", "cb-SUCCESS", UUID.randomUUID(), 1, OTHER, 1_460, 1_470, -1, "3/2/1/0");
        lines.removeIf(l -> l.contains("cb-DEATH"));
        ChaosFlowCheck check = check();
        assertFails(check, "callback SUCCESS ran, but the batch's outcome");
        assertFails(check, "callback DEATH lost: never ran");
    }

    @Test
    void aNodeThatStartedBeforeItsDependencySucceededFails() {
        wellBehaved();
        lines.removeIf(l -> l.contains(" w0 d "));
        run('N', WORKFLOW, "w0", "d", UUID.randomUUID(), 1, OTHER, 2_035, 2_050, -1, "-");
        assertFails(check(), "node d started 5 ms before c first succeeded");
    }

    @Test
    void aNodeFromTwoMessagesWasEnqueuedTwice_andALostNodeLeavesTheWorkflowUnended() {
        wellBehaved();
        run('N', WORKFLOW, "w0", "b", UUID.randomUUID(), 1, OTHER, 2_100, 2_110, -1, "-");
        lines.removeIf(l -> l.contains(" w0 d "));
        ChaosFlowCheck check = check();
        assertFails(check, "node b ENQUEUED 2 times");
        assertFails(check, "node d lost: never ran");
    }

    @Test
    void aBatchJobNeitherCompletedNorDeadLetteredIsLost() {
        wellBehaved();
        lines.removeIf(l -> l.contains(" b0 j0 "));
        run('J', BATCH, "b0", "j0", UUID.randomUUID(), 1, WORKER, 1_000, -1, -1, "-");
        assertFails(check(), "job j0 lost: never completed, not dead-lettered");
    }

    @Test
    void aWorkflowNotSucceededFails_andSoDoesARunOfAGroupNeverSubmitted() {
        wellBehaved();
        run('N', UUID.randomUUID(), "w9", "a", UUID.randomUUID(), 1, OTHER, 3_000, 3_010, -1, "-");
        ChaosFlowCheck check = check("RUNNING");
        assertFails(check, "ended RUNNING, not SUCCEEDED");
        assertFails(check, "that the run never submitted");
    }
}
