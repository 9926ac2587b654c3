package io.binomic.core.internal.cli;

/**
 * The command line is wrong: the CLI prints the message and where the command's help is, and exits 2. A
 * bad value of a setting (a settings file, an environment variable) is {@linkplain #ofSetting one
 * line} without the usage: the command line is not what to fix.
 */
final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    private final boolean showUsage;

    UsageException(String message) { this(message, true); }

    private UsageException(String message, boolean showUsage) {
        super(message);
        this.showUsage = showUsage;
    }

    /** A value of a settings file or environment variable the command refuses: printed on one line. */
    static UsageException ofSetting(String message) { return new UsageException(message, false); }

    /** A value the library refused, its message naming the problem and the fix (often a queue's state): printed on one line. */
    static UsageException refused(String message) { return new UsageException(message, false); }

    /** Whether the line that points at the command's {@code --help} follows the message. */
    boolean showUsage() { return showUsage; }
}
