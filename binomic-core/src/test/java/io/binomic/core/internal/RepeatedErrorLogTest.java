package io.binomic.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class RepeatedErrorLogTest {

    @Test
    void aRepeatedErrorIsLoggedOnceAChangedOneAtOnceAndAgainAfterTheFailureEnded() {
        RepeatedErrorLog log = new RepeatedErrorLog();
        assertTrue(log.shouldLog("WRONGTYPE on q"));
        assertFalse(log.shouldLog("WRONGTYPE on q"), "the same error within 30 s");
        assertTrue(log.shouldLog("connection refused"), "another error");
        log.reset();
        assertTrue(log.shouldLog("connection refused"), "a failure after a success");
    }

    @Test
    void briefLeavesOutTheConnectionAndArgumentsRedissonAppends() {
        RuntimeException e = new RuntimeException("Redis renewLeases failed at 127.0.0.1:6393: WRONGTYPE Operation against a key."
                + " channel: [id: 0x1f2e, L:/127.0.0.1:50312] command: (EVALSHA), params: [local key = KEYS[1] ...]");
        assertEquals("Redis renewLeases failed at 127.0.0.1:6393: WRONGTYPE Operation against a key.", RepeatedErrorLog.brief(e));
        assertEquals("plain", RepeatedErrorLog.brief(new RuntimeException("plain")));
    }
}
