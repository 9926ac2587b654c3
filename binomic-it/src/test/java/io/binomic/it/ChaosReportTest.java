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

    private static ChaosReport report(List<Run> runs, int jobs, List<Fault> faults) {
        return new ChaosReport(runs, new byte[jobs], new BitSet(), faults, 5_000, 16, 0, 2_000, 0, 0);
    }
}
