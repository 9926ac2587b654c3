package io.binomic.core.testing;

import io.binomic.api.Task;
import io.binomic.api.spi.Message;
import io.binomic.core.internal.codec.JdkJsonCodec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/** One job the code under test submitted, as {@link TestMode#enqueued()} shows it. */
public final class SubmittedJob {
    private final Message message;
    private final Instant due;

    SubmittedJob(Message message, Instant due) {
        this.message = message;
        this.due = due;
    }

    /** The job id. */
    public UUID id() { return message.id(); }

    /** The task name. */
    public String task() { return message.task(); }

    /** The queue. */
    public String queue() { return message.queue(); }

    /** When a DELAY job is due; empty for a job enqueued at once. */
    public Optional<Instant> due() { return Optional.ofNullable(due); }

    /** The argument as the JSON on the wire. */
    public String json() { return new String(message.payload(), StandardCharsets.UTF_8); }

    /** The headers given at submit (the payload codec's and tracking's included). */
    public Map<String, String> headers() { return message.wireHeaders(); }

    /**
     * The argument, decoded as {@code task} would be on a worker.
     *
     * @throws IllegalArgumentException when this job is not of {@code task}
     */
    public <A> A argument(Task<A, ?> task) {
        if (!task.name().equals(message.task())) {
            throw new IllegalArgumentException("job " + id() + " is of task '" + message.task() + "', not '" + task.name() + "'");
        }
        return task.hasNoArgument() ? null : new JdkJsonCodec().decode(message.payload(), task.argumentType());
    }

    @Override
    public String toString() {
        return "SubmittedJob[" + message.task() + " on " + message.queue() + " " + json() + (due == null ? "" : " due " + due) + "]";
    }
}
