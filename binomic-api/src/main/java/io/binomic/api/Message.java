package io.binomic.api;

import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.PayloadCodec;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * One unit of work on the wire. The {@code id} (a time-ordered UUIDv7) is stable across
 * redeliveries and retries; {@code attempt} starts at 1 and travels with the message;
 * {@code enqueuedAt} is set on every (re-)enqueue.
 *
 * @param id message id, UUIDv7
 * @param task the task name
 * @param queue the queue the message belongs to
 * @param attempt the attempt this delivery is, starting at 1
 * @param enqueuedAt when the message was last put on its queue
 * @param payload the encoded argument (JSON)
 * @param headers free-form string headers: trace context, idempotency key, and the reserved
 *     {@link #REPLAYED_FROM} and {@link #CODEC}
 */
public record Message(UUID id, String task, String queue, int attempt, Instant enqueuedAt,
                      byte[] payload, Map<String, String> headers) {

    /** Header set on a message replayed from the dead-letter queue: the dead letter's id. */
    public static final String REPLAYED_FROM = "replayedFrom";

    /**
     * Header naming the {@linkplain PayloadCodec#id() payload codec} that wrote
     * the payload, such as {@code json-jdk}. {@code submit} sets it and refuses it among the
     * caller's headers. A worker decodes the payload with that codec when it has it, and
     * dead-letters the message ({@code DECODE_ERROR}) saying which codec is missing when it does not;
     * a message without it (written before the header existed) is decoded with the worker's codec.
     */
    public static final String CODEC = "codec";

    /**
     * Header of a tracked job (its task {@linkplain Task#isTracked() is tracked}):
     * how long its status and result are kept after it ends, in milliseconds. A broker that stores
     * such a message creates the job's record with it ({@link JobRecords}); a
     * worker records the job's progress and outcome there. A message without it costs nothing more.
     */
    public static final String TRACK = "track";

    /**
     * Header holding the message's {@linkplain Priority priority}, {@code "0"} to {@code "9"}; absent
     * for the default {@value Priority#DEFAULT}. {@code submit} sets it from the task's or the submit's
     * priority and refuses it among the caller's headers.
     */
    public static final String PRIORITY = "priority";

    /** This message's {@linkplain Priority priority}: {@value Priority#DEFAULT} unless its {@link #PRIORITY} header says otherwise. */
    public int priority() {
        return Priority.of(this);
    }

    /** True when this message is a tracked job ({@link #TRACK}). */
    public boolean isTracked() {
        return headers.containsKey(TRACK);
    }

    public Message {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(task, "task");
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(enqueuedAt, "enqueuedAt");
        Objects.requireNonNull(payload, "payload");
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be >= 1, was " + attempt);
        }
        headers = Map.copyOf(headers);
    }

    /** The payload bytes; do not modify the returned array. */
    @Override
    public byte[] payload() {
        return payload;
    }

    /** This message with another attempt number and enqueue time (reclaim, replay). */
    public Message withAttempt(int newAttempt, Instant now) {
        return new Message(id, task, queue, newAttempt, now, payload, headers);
    }

    /** This message with one more header. */
    public Message withHeader(String name, String value) {
        var copy = new HashMap<>(headers);
        copy.put(name, value);
        return new Message(id, task, queue, attempt, enqueuedAt, payload, copy);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Message m && id.equals(m.id) && task.equals(m.task) && queue.equals(m.queue)
                && attempt == m.attempt && enqueuedAt.equals(m.enqueuedAt)
                && Arrays.equals(payload, m.payload) && headers.equals(m.headers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, task, queue, attempt, enqueuedAt, Arrays.hashCode(payload), headers);
    }

    @Override
    public String toString() {
        String body = payload.length <= 64 ? new String(payload, StandardCharsets.UTF_8)
                : HexFormat.of().formatHex(payload, 0, 16) + "...(" + payload.length + " bytes)";
        return "Message[id=" + id + ", task=" + task + ", queue=" + queue + ", attempt=" + attempt
                + ", enqueuedAt=" + enqueuedAt + ", payload=" + body + ", headers=" + headers + "]";
    }
}
