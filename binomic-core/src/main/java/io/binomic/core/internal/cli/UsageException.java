package io.binomic.core.internal.cli;

/** The command line is wrong: the CLI prints the message and the command's usage, and exits 2. */
final class UsageException extends Exception {
    private static final long serialVersionUID = 1L;

    UsageException(String message) { super(message); }
}
