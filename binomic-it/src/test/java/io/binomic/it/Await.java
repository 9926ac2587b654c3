package io.binomic.it;

import io.binomic.jdbc.OutboxRelay;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waits in tests: polls a condition until it holds or the time is up, or runs a call on a thread of its own. */
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

    /**
     * Waits until {@code relay} has counted {@code rows} relayed. A job can run, and a test see its
     * result, before the relay round that stored it has deleted its row and counted it.
     */
    static void relayed(OutboxRelay relay, long rows) {
        until(Duration.ofSeconds(30), () -> relay.relayed() >= rows, () -> relay.relayed() + " rows relayed, not " + rows);
    }

    /** Runs {@code submit} on a thread of its own: what it threw, or null. */
    static CompletableFuture<Throwable> failureOf(Runnable submit) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                submit.run();
                return null;
            } catch (RuntimeException e) {
                return e;
            }
        }, Thread::startVirtualThread);
    }
}
