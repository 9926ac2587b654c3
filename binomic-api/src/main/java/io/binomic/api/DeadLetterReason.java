package io.binomic.api;

/** Why a message ended in the dead-letter queue. */
public enum DeadLetterReason {
    /** Every attempt failed or timed out (or the message was stranded past its budget). */
    MAX_ATTEMPTS,
    /**
     * The handler threw a non-retryable exception, or returned a result the payload codec cannot
     * encode (error class {@code io.binomic.ResultNotEncodable}): running it again cannot help.
     */
    NON_RETRYABLE,
    /** The stored message or its payload could not be decoded; the raw fields are kept. */
    DECODE_ERROR,
    /** The message names a task no worker knows. */
    TASK_NOT_FOUND
}
