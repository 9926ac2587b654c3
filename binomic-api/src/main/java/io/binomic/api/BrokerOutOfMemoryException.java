package io.binomic.api;

import java.io.Serial;

/**
 * The broker's server is out of memory (Redis: {@code maxmemory} reached under the
 * {@code noeviction} policy) and refused a write; nothing of that write was applied. It lasts until
 * memory is freed or the limit raised: a submit that fails with it was not enqueued (submitting it
 * again later is safe), and a worker keeps the outcomes it could not write and sends them again,
 * as during an outage, until they are applied.
 */
public class BrokerOutOfMemoryException extends BrokerException {
    @Serial private static final long serialVersionUID = 1L;

    public BrokerOutOfMemoryException(String message, Throwable cause) { super(message, cause); }
}
