package io.binomic.core;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * Waits until a worker's stop has begun, by its first line ({@code worker NAME stopping: ...}), which it logs once it starts
 * no job any more. A test that must act after the stop began cannot count on a fixed sleep: the thread that calls
 * {@code stop} may be scheduled late on a loaded machine.
 */
final class StopBegan {
    private StopBegan() { }

    /** Runs {@code stop} on a platform thread of its own and returns that thread once {@code consumer}'s stop has begun. */
    static Thread stopping(String consumer, Runnable stop) throws InterruptedException {
        List<String> lines = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) { lines.add(new SimpleFormatter().formatMessage(r)); }

            @Override
            public void flush() { }

            @Override
            public void close() { }
        };
        Logger log = Logger.getLogger("io.binomic.core.internal.worker");
        log.addHandler(capture);
        try {
            Thread stopper = Thread.ofPlatform().start(stop);
            WorkerTest.await("the stop of worker " + consumer + " began", () -> lines.stream().anyMatch(l -> l.startsWith("worker " + consumer + " stopping: ")));
            return stopper;
        } finally {
            log.removeHandler(capture);
        }
    }
}
