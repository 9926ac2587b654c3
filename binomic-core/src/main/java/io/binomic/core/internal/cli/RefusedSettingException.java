package io.binomic.core.internal.cli;

/**
 * A value of the settings (file, environment, flag) that the broker refused when a command connected,
 * such as a mistyped broker option: the CLI prints the message alone and exits 2, as for any refused
 * setting, not 1 as for a failed operation.
 */
final class RefusedSettingException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    RefusedSettingException(String message, Throwable cause) { super(message, cause); }
}
