package io.binomic.api;

import java.io.Serial;

/**
 * The broker refused a command or a key to the user the connection runs as (Redis: an ACL rule,
 * {@code NOPERM}); the refused command was not run (a Lua script refused part-way keeps what it
 * wrote before). It lasts until an operator grants what is missing ({@link #grant()}): a worker
 * keeps the outcomes it could not write and sends them again, as during an outage, until they are
 * applied, so that none of their jobs runs twice.
 */
public class BrokerPermissionException extends BrokerException {
    @Serial private static final long serialVersionUID = 1L;
    private final String grant;

    public BrokerPermissionException(String message, String grant, Throwable cause) {
        super(message, cause);
        this.grant = grant;
    }

    /** What grants the missing permission, as an operator types it ({@code ACL SETUSER binomic-worker +xack}). */
    public String grant() { return grant; }
}
