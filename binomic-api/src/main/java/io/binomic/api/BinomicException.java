package io.binomic.api;

import java.io.Serial;

/**
 * Root of every exception Binomic throws. Unchecked: a queue problem is rarely something the
 * caller of {@code submit} can handle locally. Messages name the problem and the fix.
 */
public class BinomicException extends RuntimeException {
    @Serial private static final long serialVersionUID = 1L;

    public BinomicException(String message) { super(message); }

    public BinomicException(String message, Throwable cause) { super(message, cause); }
}
