package io.binomic.api;

import java.io.Serial;

/**
 * Thrown by a task handler to ask explicitly for a retry. Any exception that is not
 * non-retryable is retried anyway; this type makes the intent readable.
 */
public class RetryableException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;

    public RetryableException(String message) { super(message); }

    public RetryableException(String message, Throwable cause) { super(message, cause); }
}
