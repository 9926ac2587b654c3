package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
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

    /**
     * Found by an outside tester: a worker stopped during an outage logged its own interrupt as an error of each
     * queue, "tried again every 500 ms", just before it stopped.
     */
    @Test
    void aFetchCutOffByTheStopsInterruptIsNoFailureOfTheQueue() {
        QueueFetchFailures failures = new QueueFetchFailures();
        failures.failed("ccq", new io.binomic.api.BrokerException("Redis fetch from 'ccq' failed at 127.0.0.1:6392: InterruptedException",
                new RuntimeException(new InterruptedException())));
        assertFalse(failures.failing("ccq"), "by its cause");
        Thread.currentThread().interrupt();
        try {
            failures.failed("ccq", new io.binomic.api.BrokerException("Redis fetch from 'ccq' failed: no answer"));
        } finally {
            Thread.interrupted();
        }
        assertFalse(failures.failing("ccq"), "by the thread's interrupt");
        failures.failed("ccq", new io.binomic.api.BrokerException("Redis fetch from 'ccq' failed: WRONGTYPE"));
        assertTrue(failures.failing("ccq"), "a failure of the queue still counts");
    }

    /** A Redis that is down is not a broken key: its log line gives no key repair; a WRONGTYPE gives it. */
    @Test
    void theKeyRepairIsGivenOnlyForAKeyOfTheWrongType() {
        String refused = QueueFetchFailures.describe("cpu", "Redis fetch from 'cpu' failed at localhost:7611: Connection refused",
                Duration.ofSeconds(5));
        String wrongType = QueueFetchFailures.describe("cpu", "Redis fetch from 'cpu' failed at localhost:7611: WRONGTYPE Operation"
                + " against a key holding the wrong kind of value", Duration.ofSeconds(5));

        assertTrue(refused.contains("Connection refused") && refused.contains("fails (for 5000 ms)"), refused);
        String first = QueueFetchFailures.describe("cpu", "Connection refused", Duration.ZERO);
        assertTrue(first.startsWith("fetching from queue 'cpu' fails: Connection refused"), first);
        assertFalse(refused.contains("TYPE") || refused.contains("delete or rename"), refused);
        assertTrue(wrongType.contains("{cpu}:stream") && wrongType.contains("check it with TYPE, then delete or rename it"), wrongType);
    }
}
