package io.binomic.core;

/**
 * Waits until a worker's stop has begun, by its first line ({@code worker NAME stopping: ...}), which it logs once it starts
 * no job any more. A test that must act after the stop began cannot count on a fixed sleep: the thread that calls
 * {@code stop} may be scheduled late on a loaded machine.
 */
final class StopBegan {
    private StopBegan() { }

    /** Runs {@code stop} on a platform thread of its own and returns that thread once {@code consumer}'s stop has begun. */
    static Thread stopping(String consumer, Runnable stop) throws InterruptedException {
        try (CapturedWorkerLines captured = new CapturedWorkerLines()) {
            Thread stopper = Thread.ofPlatform().start(stop);
            WorkerTest.await("the stop of worker " + consumer + " began",
                    () -> captured.lines().stream().anyMatch(l -> l.startsWith("worker " + consumer + " stopping: ")));
            return stopper;
        }
    }
}
