package io.binomic.it;

import java.text.MessageFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** The log lines of {@code io.binomic.core} while attached, formatted as "LEVEL message": what a test reads of a worker's own lines. */
final class CapturedCoreLog {
    private final String loggers;
    /** Held here: java.util.logging keeps its loggers weakly, and the handler must outlive a collection. */
    private final Logger binomicLog = Logger.getLogger("io.binomic");
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLoggerName() != null && r.getLoggerName().startsWith(loggers)) {
                lines.add(r.getLevel() + " " + MessageFormat.format(String.valueOf(r.getMessage()),
                        r.getParameters() == null ? new Object[0] : r.getParameters()));
            }
        }

        @Override
        public void flush() { }

        @Override
        public void close() { }
    };

    CapturedCoreLog() { this("io.binomic.core"); }

    /** The lines of the loggers whose names start with {@code loggers} ("io.binomic" for the broker's too). */
    CapturedCoreLog(String loggers) { this.loggers = loggers; }

    void attach() { binomicLog.addHandler(capture); }

    void detach() { binomicLog.removeHandler(capture); }

    /** The lines so far, oldest first. */
    List<String> lines() { return lines; }

    /** The lines, one a line, for a failure message. */
    @Override
    public String toString() { return String.join("\n", lines); }
}
