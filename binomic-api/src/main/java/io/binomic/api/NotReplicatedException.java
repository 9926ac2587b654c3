package io.binomic.api;

import java.io.Serial;

/**
 * A write was applied on the primary, but fewer replicas than the broker was configured to wait
 * for (Redis: broker option {@code wait.replicas}) confirmed it in time. It is not undone: it
 * survives a failover only if a replica that has it is promoted. For a submit, the message may or
 * may not run, and submitting it again makes a second job, with a new id, unless the task or the
 * submit has a unique key ({@code Task.Builder.unique}, {@code SubmitOptions.Builder.unique}); a worker sends
 * its outcomes again until they are confirmed (a resend of an applied outcome changes nothing).
 */
public class NotReplicatedException extends BrokerException {
    @Serial private static final long serialVersionUID = 1L;
    private final int confirmed;
    private final int required;

    public NotReplicatedException(String message, int confirmed, int required) {
        super(message);
        this.confirmed = confirmed;
        this.required = required;
    }

    /** Replicas that confirmed the write. */
    public int confirmed() { return confirmed; }

    /** Replicas required. */
    public int required() { return required; }
}
