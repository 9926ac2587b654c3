package io.binomic.core.internal.cli;

import io.binomic.core.internal.process.OperatorTerms;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Formats a daemon's log lines ({@code binomic master}, {@code binomic dashboard}) as its handler
 * did, then names settings as the operator gives them ({@link OperatorTerms#inOperatorTerms}): the
 * library's hints name its Java API ("check BrokerConfig.url"), which a shell user never typed.
 * One formatter for every line, so a new message needs no mapping of its own.
 */
final class OperatorTermsFormatter extends Formatter {
    private final Formatter delegate;

    private OperatorTermsFormatter(Formatter delegate) {
        this.delegate = delegate;
    }

    /** Wraps the formatter of each of {@code logger}'s handlers (once: a second call changes nothing). */
    static void install(Logger logger) {
        for (Handler handler : logger.getHandlers()) {
            Formatter current = handler.getFormatter();
            if (current != null && !(current instanceof OperatorTermsFormatter)) {
                handler.setFormatter(new OperatorTermsFormatter(current));
            }
        }
    }

    @Override
    public String format(LogRecord record) { return OperatorTerms.inOperatorTerms(delegate.format(record)); }

    @Override
    public String getHead(Handler handler) { return delegate.getHead(handler); }

    @Override
    public String getTail(Handler handler) { return delegate.getTail(handler); }
}
