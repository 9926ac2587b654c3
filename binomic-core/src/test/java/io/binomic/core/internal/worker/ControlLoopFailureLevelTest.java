package io.binomic.core.internal.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BrokerException;
import java.lang.System.Logger.Level;
import org.junit.jupiter.api.Test;

/** A worker's loop that fails because the worker is stopping does not report a broker failure. */
class ControlLoopFailureLevelTest {

    @Test
    void aBrokerCallCutShortByTheStopIsDebugAndAnyOtherFailureAWarning() {
        assertEquals(Level.WARNING, ControlLoop.failureLevel(new BrokerException("Redis nextDue failed: timeout")));
        assertEquals(Level.DEBUG, ControlLoop.failureLevel(
                new BrokerException("Redis nextDue on queue 'io' failed: InterruptedException", new RuntimeException(new InterruptedException()))));
        Thread.currentThread().interrupt();
        try {
            assertEquals(Level.DEBUG, ControlLoop.failureLevel(new BrokerException("Redis nextDue failed")), "the loop's thread is interrupted");
        } finally {
            Thread.interrupted();
        }
    }
}
