package io.binomic.core.internal.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.core.WorkerHealth;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A loop that completes no round while the broker is away waits on it, and the master must leave
 * such a worker alone (it holds outcomes it could not write); a loop that completes no round while
 * the broker answers, or whose thread ended, is stalled.
 */
class HealthVerdictTest {
    private static final Optional<String> NONE = Optional.empty();
    private static final Optional<String> STUCK = Optional.of("the housekeeping loop has not completed a round for 94 s");
    private static final Optional<String> DOWN = Optional.of("fetching has failed for 90 s: Connection refused");

    @Test
    void aLoopWithoutARoundWhileFetchesFailIsWaitingOnTheBrokerNotStalled() {
        var verdict = HealthCheck.verdict(NONE, STUCK, DOWN, NONE);
        assertEquals(WorkerHealth.State.BROKER_UNREACHABLE, verdict.state());
        assertEquals(DOWN, verdict.reason());
    }

    @Test
    void aLoopWithoutARoundWhileTheBrokerAnswersIsStalled() {
        var verdict = HealthCheck.verdict(NONE, STUCK, NONE, Optional.of("a periodic broker call has not returned for 95 s"));
        assertEquals(WorkerHealth.State.STALLED, verdict.state());
        assertEquals(STUCK, verdict.reason());
    }

    @Test
    void aLoopWhoseThreadEndedIsStalledEvenInAnOutage() {
        Optional<String> stopped = Optional.of("binomic-fetch-w1 stopped");
        assertEquals(new HealthCheck.Verdict(WorkerHealth.State.STALLED, stopped), HealthCheck.verdict(stopped, STUCK, DOWN, NONE));
    }

    @Test
    void aPeriodicCallThatDoesNotReturnAloneSaysTheBrokerIsUnreachable() {
        Optional<String> call = Optional.of("a periodic broker call has not returned for 12 s");
        assertEquals(new HealthCheck.Verdict(WorkerHealth.State.BROKER_UNREACHABLE, call), HealthCheck.verdict(NONE, NONE, NONE, call));
        assertEquals(new HealthCheck.Verdict(WorkerHealth.State.CONSUMING, NONE), HealthCheck.verdict(NONE, NONE, NONE, NONE));
    }
}
