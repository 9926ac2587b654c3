package io.binomic.core.internal;

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
    private static long lastMillis;
    private static int counter;

    private Uuid7() { }

    public static UUID next(Clock clock) {
        long millis = clock.millis();
        int seq;
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
        } finally {
            LOCK.unlock();
        }
        long msb = (millis << 16) | 0x7000L | seq;
        long lsb = (RANDOM.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
    }
}
