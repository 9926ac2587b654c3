package io.binomic.core.internal.cli;

import java.io.PrintStream;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * A one-line progress bar on stderr, redrawn in place with a carriage return, so that stdout
 * stays clean for scripts. Redraws at most every {@value #REDRAW_MILLIS} ms, and always at 100%.
 */
final class ProgressBar implements LongConsumer {
    static final int REDRAW_MILLIS = 100;
    private static final int WIDTH = 30;

    private final PrintStream err;
    private final String label;
    private final long total;
    private final LongSupplier clockMillis;
    private long lastDrawn = Long.MIN_VALUE;
    private boolean drawn;

    ProgressBar(PrintStream err, String label, long total, LongSupplier clockMillis) {
        this.err = err;
        this.label = label;
        this.total = Math.max(total, 1);
        this.clockMillis = clockMillis;
    }

    @Override
    public void accept(long done) {
        long now = clockMillis.getAsLong();
        if (done < total && drawn && now - lastDrawn < REDRAW_MILLIS) {
            return;
        }
        lastDrawn = now;
        drawn = true;
        err.print("\r" + render(Math.min(done, total)));
        err.flush();
    }

    String render(long done) {
        int filled = (int) (WIDTH * done / total);
        return label + " [" + "#".repeat(filled) + "-".repeat(WIDTH - filled) + "] " + done + "/" + total + " "
                + (100 * done / total) + "%";
    }

    /** Ends the line, so that what follows starts on its own. */
    void finish() {
        if (drawn) {
            err.println();
        }
    }
}
