package io.binomic.api;

import java.io.Serial;

/**
 * The broker's server answered and refused this client: its credentials (a wrong password, a user
 * that needs one) or its TLS (a certificate the client does not trust, or issued for another name, or a
 * {@code rediss://} URL at a port that answers plain Redis, without TLS).
 * Trying again does not help: the setting must be changed, on the client or on the server. Unlike a
 * broker that cannot be reached, which a worker waits for as after an outage, {@code binomic master}
 * refuses to start its workers on it (exit 2), as for a bad setting of its own.
 */
public class BrokerAccessRefusedException extends BrokerException {
    @Serial private static final long serialVersionUID = 1L;

    public BrokerAccessRefusedException(String message, Throwable cause) { super(message, cause); }
}
