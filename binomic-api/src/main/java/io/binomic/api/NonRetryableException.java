package io.binomic.api;

import java.io.Serial;

/**
 * Thrown by a task handler when running the same message again cannot succeed (bad input,
 * a business rule said no). The message goes to the dead-letter queue at once with reason
 * {@link DeadLetterReason#NON_RETRYABLE}. Tasks can also declare other exception types
 * non-retryable with {@link Task.Builder#nonRetryableOn(Class[])}.
 */
public class NonRetryableException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;

    public NonRetryableException(String message) { super(message); }

    public NonRetryableException(String message, Throwable cause) { super(message, cause); }
}
