package io.binomic.core;

import java.text.MessageFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** The WARNING lines one logger writes while attached, as a user reads them (parameters filled in). */
final class CapturedWarnings {
    private final Logger logger;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel() == Level.WARNING) {
                Object[] parameters = r.getParameters();
                // MessageFormat would also take the quotes out of a line written without parameters
                lines.add(parameters == null || parameters.length == 0 ? r.getMessage() : MessageFormat.format(r.getMessage(), parameters));
            }
        }

        @Override
        public void flush() { }

        @Override
        public void close() { }
    };

    CapturedWarnings(Class<?> of) { this.logger = Logger.getLogger(of.getName()); }

    void attach() { logger.addHandler(handler); }

    void detach() { logger.removeHandler(handler); }

    List<String> lines() { return lines; }
}
