package io.binomic.core.internal.cli;

import java.util.List;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The log level of a command run from the command line: a one-shot command (a listing, a submit, a
 * replay) prints only warnings and errors on stderr, since the INFO lines of the client it starts
 * (Binomic's and Redisson's) say nothing its output does not; {@value #VERBOSE} (or {@code -v})
 * keeps them. The commands that run until stopped, the master and the dashboard, keep logging their
 * lifecycle at INFO, and a {@code java.util.logging} configuration of the user's own is left alone.
 */
final class CliLogging {
    static final String VERBOSE = "--verbose";
    private static final Set<String> DAEMONS = Set.of("master", "dashboard");

    private CliLogging() { }

    /** Sets the level for {@code words}, the command line, and takes {@value #VERBOSE} and {@code -v} out of it. */
    static void configure(List<String> words) {
        boolean verbose = words.remove(VERBOSE) | words.remove("-v");
        boolean daemon = words.stream().filter(w -> !w.startsWith("-")).findFirst().filter(DAEMONS::contains).isPresent();
        boolean configured = System.getProperty("java.util.logging.config.file") != null
                || System.getProperty("java.util.logging.config.class") != null;
        if (!verbose && !daemon && !configured) {
            Logger.getLogger("").setLevel(Level.WARNING);
        }
    }
}
