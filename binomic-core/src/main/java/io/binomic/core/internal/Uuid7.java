package io.binomic.core.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Time-ordered UUIDs, version 7 (RFC 9562): 48 bits of Unix milliseconds, then a 12-bit counter
 * that keeps ids generated in the same millisecond by this process increasing, then random bits.
 */
public final class Uuid7 {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final ReentrantLock LOCK = new ReentrantLock();
    /**
     * Random bits drawn from {@link #RANDOM} in blocks: one call per id (a lock and a SHA-1 round
     * of the native generator each) took about a tenth of a bulk enqueue's submitting thread.
     */
    private static final byte[] BITS = new byte[4096];
    private static final VarHandle LONG_AT = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static int bitsAt = BITS.length;
    private static long lastMillis;
    private static int counter;

    private Uuid7() { }

    public static UUID next(Clock clock) {
        long millis = clock.millis();
        int seq;
        long random;
        LOCK.lock();
        try {
            if (millis <= lastMillis) {
                millis = lastMillis;
                counter++;
                if (counter > 0xFFF) {
                    millis++;
                    counter = 0;
                }
            } else {
                counter = RANDOM.nextInt(0x200);
            }
            lastMillis = millis;
            seq = counter;
            if (bitsAt == BITS.length) {
                RANDOM.nextBytes(BITS);
                bitsAt = 0;
            }
            random = (long) LONG_AT.get(BITS, bitsAt);
            bitsAt += Long.BYTES;
        } finally {
            LOCK.unlock();
        }
        long msb = (millis << 16) | 0x7000L | seq;
        long lsb = (random & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
    }
}
