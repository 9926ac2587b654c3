package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.it.ChaosLedger.Run;
import io.binomic.it.ChaosReport.Fault;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** How the chaos suite lays duplicates at faults: its verdicts must be right before they can fail a run. */
class ChaosReportTest {
    private static final long FROZEN = 101;
    private static final long OTHER = 202;
    private static final Fault FREEZE = new Fault("SIGSTOP", FROZEN, 7_700, 15_100, "frozen 7400 ms");
    private static final Fault KILL = new Fault("SIGKILL", FROZEN, 17_800, 17_800, "killed");

    @Test
    void executionsRunAfterAThawAndCaughtByALaterKillAreLaidAtTheKill() {
        // 56 jobs run by the thawed JVM in the 2.7 s before it is killed, their acks not yet
        // written, then run again by the other worker: the kill explains them, within its bound.
        List<Run> runs = new ArrayList<>();
        for (int n = 0; n < 56; n++) {
            UUID id = UUID.randomUUID();
            long start = 15_200 + n * 40L;
            runs.add(new Run(id, 1, FROZEN, start, start + 20, -1, n, -1));
            runs.add(new Run(id, 2, OTHER, 23_000 + n, 23_010 + n, -1, n, -1));
        }
        ChaosReport report = report(runs, 56, List.of(FREEZE, KILL));

        assertEquals(Map.of(KILL, 56), report.attributed);
        assertEquals(List.of(), report.failures);
        assertEquals(56, report.inFlight(KILL) - 16, "the 56 returned less than the ack window before the kill");
    }

    @Test
    void executionsRunningWhenAJvmFroze_areLaidAtTheFreeze_andMoreThanItsSlotsFailTheRun() {
        // 17 executions under way at the freeze on a JVM of 16 slots, each taken over and run again:
        // one more than the JVM could hold, which the report must flag.
        List<Run> runs = new ArrayList<>();
        for (int n = 0; n < 17; n++) {
            UUID id = UUID.randomUUID();
            runs.add(new Run(id, 1, FROZEN, 7_600, 15_150, -1, n, -1));
            runs.add(new Run(id, 2, OTHER, 13_000 + n, 13_010 + n, -1, n, -1));
        }
        ChaosReport report = report(runs, 17, List.of(FREEZE));

        assertEquals(Map.of(FREEZE, 17), report.attributed);
        assertEquals(1, report.failures.size(), report.failures.toString());
    }

    @Test
    void executionsInFlightAcrossAClusterFailoverAreLaidAtIt_evenWhenItWasShorterThanTheLeaseMargin() {
        // A master killed for 2 s (under the lease margin of 3.75 s): its fetches and renewals not yet
        // replicated are gone with it, so what was in flight then may run again.
        Fault failover = new Fault("REDIS_FAILOVER", 0, 10_000, 12_000, "master killed, replica promoted");
        ChaosReport report = report(ranTwiceAround(11_000, 4), 4, List.of(failover));

        assertEquals(Map.of(failover, 4), report.attributed);
        assertEquals(0, report.unexplained());
    }

    @Test
    void aMessageHandedOutTwiceAsNewJustAfterAFailover_isLaidAtIt_butNotLaterAndNotAfterAReclaim() {
        // A master killed (10-12 s): a producer's chunk it had replicated but not confirmed is sent
        // again whole to the new primary when its reply times out, 5-6 s after the failover ended;
        // both copies, one message id, run at attempt 1.
        Fault failover = new Fault("REDIS_FAILOVER", 0, 10_000, 12_000, "master killed, replica promoted");
        List<Run> runs = new ArrayList<>();
        for (int n = 0; n < 9; n++) {
            UUID id = UUID.randomUUID();
            runs.add(new Run(id, 1, OTHER, 18_100 + n, 18_130 + n, -1, n, -1));
            runs.add(new Run(id, 1, OTHER, 18_300 + n, 18_330 + n, -1, n, -1));
        }
        // The same, long after the failover: nothing explains it.
        UUID late = UUID.randomUUID();
        runs.add(new Run(late, 1, OTHER, 40_000, 40_030, -1, 9, -1));
        runs.add(new Run(late, 1, FROZEN, 40_300, 40_330, -1, 9, -1));
        // Run again at attempt 2 just after it (a reclaim, not a second copy): nor does the failover.
        UUID reclaimed = UUID.randomUUID();
        runs.add(new Run(reclaimed, 1, OTHER, 13_000, 13_030, -1, 10, -1));
        runs.add(new Run(reclaimed, 2, FROZEN, 13_300, 13_330, -1, 10, -1));
        ChaosReport report = report(runs, 11, List.of(failover));

        assertEquals(Map.of(failover, 9), report.attributed);
        assertEquals(2, report.unexplained());
    }

    @Test
    void aReshardExplainsNoDuplicate_howeverLongItTakes() {
        // Slots move whole (keys, stream, consumer group and its pending entries): a message run
        // twice across a reshard has no explanation, and a 10 s reshard is no outage.
        Fault reshard = new Fault("REDIS_RESHARD", 0, 10_000, 20_000, "moved 1066 slots");
        ChaosReport report = report(ranTwiceAround(11_000, 3), 3, List.of(reshard));

        assertEquals(Map.of(), report.attributed);
        assertEquals(3, report.unexplained());
    }

    /** {@code count} messages each completed on two JVMs, the first execution running at {@code at}. */
    private static List<Run> ranTwiceAround(long at, int count) {
        List<Run> runs = new ArrayList<>();
        for (int n = 0; n < count; n++) {
            UUID id = UUID.randomUUID();
            runs.add(new Run(id, 1, OTHER, at - 10, at + 20, -1, n, -1));
            runs.add(new Run(id, 2, FROZEN, at + 30_000, at + 30_020, -1, n, -1));
        }
        return runs;
    }

    private static ChaosReport report(List<Run> runs, int jobs, List<Fault> faults) {
        return new ChaosReport(runs, new byte[jobs], new BitSet(), faults, 5_000, 16, 0, 2_000, 0, 0);
    }
}
