package io.binomic.api;

import java.io.Serial;

/** A payload or a stored message could not be decoded. Such a message is dead-lettered. */
public class PayloadDecodeException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;

    public PayloadDecodeException(String message, Throwable cause) { super(message, cause); }

    public PayloadDecodeException(String message) { super(message); }
}
