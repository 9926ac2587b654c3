package io.binomic.core.internal.process;

import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Polls a condition until it holds or a deadline passes; the failure message says what was awaited. */
final class Await {
    private Await() { }

    static void until(Duration timeout, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what);
            }
            sleep(20);
        }
    }

    /** Like {@link #until} with a description computed at failure time (for example the slot contents). */
    static void until(Duration timeout, Supplier<String> what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what.get());
            }
            sleep(20);
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    /** Sends a POSIX signal with the {@code kill} command; the JDK can only send TERM and KILL. */
    static void signal(long pid, String signal) {
        try {
            int exit = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start().waitFor();
            if (exit != 0) {
                throw new AssertionError("kill -" + signal + " " + pid + " exited " + exit);
            }
        } catch (java.io.IOException e) {
            throw new AssertionError("cannot run kill", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }
}
