package io.binomic.api;

import java.io.Serial;

/** The broker could not be reached or refused an operation (connection, credentials, script). */
public class BrokerException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;

    public BrokerException(String message) { super(message); }

    public BrokerException(String message, Throwable cause) { super(message, cause); }
}
