package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class QueueFetchFailuresTest {

    /**
     * Redisson appends the connection and the command's arguments, with buffer ids, to every error:
     * counted as a new error each time, a broken queue was logged on every fetch (58 times in 43 s).
     */
    @Test
    void anErrorRepeatedOnOtherConnectionsWithOtherArgumentsIsTheSameError() {
        String a = "Redis fetch from 'b2' failed at 127.0.0.1:6393: WRONGTYPE Operation against a key holding the wrong kind of value."
                + " channel: [id: 0x1f2e, L:/127.0.0.1:50312 - R:127.0.0.1/127.0.0.1:6393] command: (EVALSHA),"
                + " params: [abc, 1, PooledUnsafeDirectByteBuf(ridx: 0, widx: 21, cap: 256)]";
        String b = "Redis fetch from 'b2' failed at 127.0.0.1:6393: WRONGTYPE Operation against a key holding the wrong kind of value."
                + " channel: [id: 0x9a01, L:/127.0.0.1:50388 - R:127.0.0.1/127.0.0.1:6393] command: (EVALSHA),"
                + " params: [abc, 1, PooledUnsafeDirectByteBuf(ridx: 0, widx: 23, cap: 512)]";
        String other = "Redis fetch from 'b2' failed at 127.0.0.1:6393: NOGROUP No such key or consumer group.";

        assertTrue(QueueFetchFailures.sameError(a, b));
        assertFalse(QueueFetchFailures.sameError(a, other));
    }
}
