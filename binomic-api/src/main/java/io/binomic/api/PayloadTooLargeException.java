package io.binomic.api;

import java.io.Serial;

/** An encoded payload is larger than the configured limit; nothing was enqueued. */
public class PayloadTooLargeException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;
    private final int size;
    private final int limit;

    public PayloadTooLargeException(String task, int size, int limit) {
        super("payload of task '" + task + "' is " + size + " bytes, over the limit of " + limit
                + " bytes; send a reference (a key or URL) instead of the data, or raise"
                + " BrokerConfig.maxPayloadBytes");
        this.size = size;
        this.limit = limit;
    }

    public int size() { return size; }

    public int limit() { return limit; }
}
