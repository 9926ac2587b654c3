package io.binomic.core;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/** The lines the worker's loggers write while this is open, at every level, as a user reads them (parameters filled in). */
final class CapturedWorkerLines implements AutoCloseable {
    private final Logger logger = Logger.getLogger("io.binomic.core.internal.worker");
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) { lines.add(new SimpleFormatter().formatMessage(r)); }

        @Override
        public void flush() { }

        @Override
        public void close() { }
    };

    CapturedWorkerLines() { logger.addHandler(handler); }

    List<String> lines() { return lines; }

    @Override
    public void close() { logger.removeHandler(handler); }
}
