package io.binomic.core.internal.process;

import java.time.Duration;

/**
 * How long to wait before restarting a worker that failed {@code streak} times in a row. Only
 * start-up failures (a worker that never reached RUNNING, or ran less than a moment) extend a
 * streak; a worker that served restarts at once (see {@code SlotSupervisor}). The
 * first restart is immediate (one crash says little, and a worker that is down is capacity lost),
 * the next waits {@code initial}, and each further one twice as long up to {@code max}: a worker
 * that cannot start costs a JVM start per minute at worst, not a core.
 */
record RestartBackoff(Duration initial, Duration max) {

    Duration delay(int streak) {
        if (streak <= 1) {
            return Duration.ZERO;
        }
        Duration delay = initial;
        for (int failure = 3; failure <= streak && delay.compareTo(max) < 0; failure++) {
            delay = delay.multipliedBy(2);
        }
        return delay.compareTo(max) > 0 ? max : delay;
    }
}
