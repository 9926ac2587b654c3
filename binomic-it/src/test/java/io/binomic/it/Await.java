package io.binomic.it;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Polls a condition until it holds or the time is up. */
final class Await {
    private Await() { }

    static void until(Duration timeout, BooleanSupplier condition, Supplier<String> whatWasSeen) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not reached within " + timeout + ": " + whatWasSeen.get());
            }
            RedisServer.sleep(50);
        }
    }
}
