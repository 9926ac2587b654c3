package io.binomic.api.spi;

import io.binomic.api.Priority;
import io.binomic.api.TaskLimits;
import io.binomic.api.TraceContext;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * One unit of work as brokers store it: the envelope (id, task, queue, attempt, priority, tracking,
 * codec, unique and limit keys, trace context, replay origin) as typed fields, the encoded argument,
 * and the headers the submitter gave. The {@code id} (a time-ordered UUIDv7) is stable across
 * redeliveries and retries; {@code attempt} starts at 1 and travels with the message;
 * {@code enqueuedAt} is set on every (re-)enqueue.
 *
 * <p>Built with {@link #builder()}, which refuses an invalid field naming it. On the wire the
 * envelope travels as reserved string headers beside the submitter's ({@link #wireHeaders()},
 * read back by {@link #fromWire}): the names in {@link #RESERVED}. A broker stores those maps as
 * they are, so a message written by one version of Binomic is read by another.
 */
public final class Message {

    /** Header set on a message replayed from the dead-letter queue: the dead letter's id. */
    public static final String REPLAYED_FROM = "replayedFrom";

    /**
     * Header naming the {@linkplain PayloadCodec#id() payload codec} that wrote the payload, such as
     * {@code json-jdk}. A worker decodes the payload with that codec when it has it, and dead-letters
     * the message ({@code DECODE_ERROR}) saying which codec is missing when it does not; a message
     * without it (written before the header existed) is decoded with the worker's codec.
     */
    public static final String CODEC = "codec";

    /**
     * Header of a tracked job: how long its status and result are kept after it ends, in
     * milliseconds. A broker that stores such a message creates the job's record with it
     * ({@link JobRecords}); a worker records the job's progress and outcome there.
     */
    public static final String TRACK = "track";

    /**
     * Header holding the message's {@linkplain Priority priority}, {@code "0"} to {@code "9"}; absent
     * for the default {@value Priority#DEFAULT}.
     */
    public static final String PRIORITY = "priority";

    /**
     * Header of a job of a batch: the batch's id. A broker with {@link Batches} counts the job's final
     * settlement in that batch, atomically with it.
     */
    public static final String BATCH = "batch";

    /** Header of a batch's callback job: the id of the batch it reports on. */
    public static final String BATCH_CALLBACK = "batchCallback";

    /**
     * Header of a job of a workflow: the workflow's id. A broker with {@link Workflows} records the
     * job's final settlement in that workflow, and enqueues the jobs it releases, atomically with it.
     */
    public static final String WORKFLOW = "workflow";

    /**
     * Every header name the envelope uses; a submitter's header of one of these names is refused
     * (the trace headers are read into the {@link TraceContext} instead).
     */
    public static final Set<String> RESERVED = Set.of(CODEC, TRACK, PRIORITY, UniqueClaim.HEADER, UniqueClaim.DEBOUNCE_HEADER,
            TaskLimits.KEY_HEADER, FlowLimit.RATE_ADMITTED_HEADER, FlowLimit.TURN_HEADER, TraceContext.TRACEPARENT,
            TraceContext.TRACESTATE, REPLAYED_FROM, BATCH, BATCH_CALLBACK, WORKFLOW);

    private final UUID id;
    private final String task;
    private final String queue;
    private final int attempt;
    private final Instant enqueuedAt;
    private final byte[] payload;
    private final Envelope envelope;
    private final Map<String, String> headers;

    /** The typed reserved fields; {@code null} or 0 for absent. */
    private record Envelope(int priority, Duration trackFor, String codec, UniqueClaim unique, String debounceKey,
                            String limitKey, int rateAdmittedAttempt, int turnAttempt, TraceContext traceContext,
                            String replayedFrom, UUID batch, UUID batchCallback, UUID workflow) { }

    private Message(Builder b, boolean fromWire) {
        id = Objects.requireNonNull(b.id, "id must not be null");
        task = Objects.requireNonNull(b.task, "task must not be null");
        queue = Objects.requireNonNull(b.queue, "queue must not be null");
        enqueuedAt = Objects.requireNonNull(b.enqueuedAt, "enqueuedAt must not be null");
        payload = Objects.requireNonNull(b.payload, "payload must not be null");
        if (b.attempt < 1) {
            throw new IllegalArgumentException("attempt must be >= 1, was " + b.attempt);
        }
        attempt = b.attempt;
        if (!fromWire) {
            validate(b);
        }
        envelope = new Envelope(b.priority, b.trackFor, b.codec, b.unique, b.debounceKey, b.limitKey,
                b.rateAdmittedAttempt, b.turnAttempt, b.traceContext, b.replayedFrom, b.batch, b.batchCallback, b.workflow);
        headers = b.headers.isEmpty() ? Map.of() : b.ownHeaders ? Map.copyOf(b.headers) : b.headers; // most have none: no copy
    }

    /** What only a message built by the builder must pass: what is read from the wire is taken as written. */
    private static void validate(Builder b) {
        Priority.require("priority", b.priority);
        if (b.trackFor != null && (b.trackFor.isNegative() || b.trackFor.isZero())) {
            throw new IllegalArgumentException("trackFor must be positive, was " + b.trackFor
                    + "; leave it out for a job whose status is not kept");
        }
        requireNotBlank("codec", b.codec);
        requireNotBlank("debounceKey", b.debounceKey);
        requireNotBlank("replayedFrom", b.replayedFrom);
        if (b.limitKey != null && b.limitKey.isEmpty()) {
            throw new IllegalArgumentException("limitKey must not be empty; leave it out for a job without one");
        }
        requireAttemptMark("rateAdmittedAttempt", b.rateAdmittedAttempt);
        requireAttemptMark("turnAttempt", b.turnAttempt);
        for (String name : b.headers.keySet()) {
            if (RESERVED.contains(name)) {
                throw new IllegalArgumentException("header '" + name + "' is reserved for the message's envelope; set it with"
                        + " its Message.Builder field, or give the header another name");
            }
        }
    }

    private static void requireNotBlank(String field, String value) {
        if (value != null && value.isBlank()) {
            throw new IllegalArgumentException(field + " must not be blank; leave it out for none");
        }
    }

    private static void requireAttemptMark(String field, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(field + " must be an attempt (>= 1), or 0 for none, was " + value);
        }
    }

    /** A builder of a message; id, task, queue, enqueuedAt and payload must be given. */
    public static Builder builder() { return new Builder(); }

    /** A builder holding this message's fields, to change some. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.id = id;
        b.task = task;
        b.queue = queue;
        b.attempt = attempt;
        b.enqueuedAt = enqueuedAt;
        b.payload = payload;
        b.priority = envelope.priority;
        b.trackFor = envelope.trackFor;
        b.codec = envelope.codec;
        b.unique = envelope.unique;
        b.debounceKey = envelope.debounceKey;
        b.limitKey = envelope.limitKey;
        b.rateAdmittedAttempt = envelope.rateAdmittedAttempt;
        b.turnAttempt = envelope.turnAttempt;
        b.traceContext = envelope.traceContext;
        b.replayedFrom = envelope.replayedFrom;
        b.batch = envelope.batch;
        b.batchCallback = envelope.batchCallback;
        b.workflow = envelope.workflow;
        b.headers = headers; // this message's own unmodifiable map: copied only if the builder changes it
        return b;
    }

    /**
     * The message a broker stored as {@code wireHeaders} beside its other fields: the reserved
     * headers become the typed fields, the others stay headers. A reserved header whose value does
     * not parse (another producer's) is kept as an ordinary header, so it is written back unchanged
     * and read as no setting: a bad priority runs at the default, a malformed traceparent as no trace.
     */
    public static Message fromWire(UUID id, String task, String queue, int attempt, Instant enqueuedAt, byte[] payload,
                                   Map<String, String> wireHeaders) {
        Builder b = builder().id(id).task(task).queue(queue).attempt(attempt).enqueuedAt(enqueuedAt).payload(payload);
        WireHeaders.read(wireHeaders, b);
        return new Message(b, true);
    }

    /**
     * The headers as they travel: the reserved ones the envelope sets (priority only when not the
     * default), then the submitter's. The reserved ones come in a fixed order and the others sorted,
     * so a message is always written the same way; a reader takes the JSON object whatever its order.
     */
    public Map<String, String> wireHeaders() {
        Envelope e = envelope;
        if (headers.isEmpty() && e.priority == Priority.DEFAULT && e.trackFor == null && e.unique == null && e.debounceKey == null
                && e.limitKey == null && e.rateAdmittedAttempt == 0 && e.turnAttempt == 0 && e.traceContext == null
                && e.replayedFrom == null && e.batch == null && e.batchCallback == null && e.workflow == null) {
            return e.codec == null ? Map.of() : Map.of(CODEC, e.codec); // nearly every message: no map to build
        }
        Map<String, String> wire = new LinkedHashMap<>();
        putReserved(wire);
        wire.putAll(new TreeMap<>(headers));
        return Collections.unmodifiableMap(wire);
    }

    /** Message id, UUIDv7. */
    public UUID id() { return id; }

    public String task() { return task; }

    /** The queue the message belongs to. */
    public String queue() { return queue; }

    /** The attempt this delivery is, starting at 1. */
    public int attempt() { return attempt; }

    /** When the message was last put on its queue. */
    public Instant enqueuedAt() { return enqueuedAt; }

    /** The encoded argument; do not modify the returned array. */
    public byte[] payload() { return payload; }

    /** This message's {@linkplain Priority priority}, {@value Priority#DEFAULT} unless set. */
    public int priority() { return envelope.priority; }

    /** True when this message is a tracked job (its status and result are kept: {@link #trackFor()}). */
    public boolean isTracked() { return envelope.trackFor != null; }

    /** How long a tracked job's status and result are kept after it ends; empty for an untracked job. */
    public Optional<Duration> trackFor() { return Optional.ofNullable(envelope.trackFor); }

    /** {@link #trackFor()} in milliseconds as the wire and the broker scripts take it; null when untracked. */
    public String trackForMillis() { return envelope.trackFor == null ? null : Long.toString(envelope.trackFor.toMillis()); }

    /** The id of the payload codec that wrote the payload; empty for a message written before it was recorded. */
    public Optional<String> codec() { return Optional.ofNullable(envelope.codec); }

    /** The unique key this message claims; empty when it is not unique. */
    public Optional<UniqueClaim> unique() { return Optional.ofNullable(envelope.unique); }

    /** The debounce key of a debounced message. */
    public Optional<String> debounceKey() { return Optional.ofNullable(envelope.debounceKey); }

    /** The limit key of a job of a task with per-key limits, computed at submit. */
    public Optional<String> limitKey() { return Optional.ofNullable(envelope.limitKey); }

    /** The attempt the rate limits already admitted this message for ({@link FlowLimit#RATE_ADMITTED_HEADER}). */
    public OptionalInt rateAdmittedAttempt() { return attemptMark(envelope.rateAdmittedAttempt); }

    /** True when the rate limits admitted this very attempt. */
    public boolean isRateAdmitted() { return envelope.rateAdmittedAttempt == attempt; }

    /** The attempt whose concurrency turn came ({@link FlowLimit#TURN_HEADER}). */
    public OptionalInt turnAttempt() { return attemptMark(envelope.turnAttempt); }

    /** True when this very attempt's concurrency turn came: it may take a free slot ahead of those waiting. */
    public boolean isTurn() { return envelope.turnAttempt == attempt; }

    private static OptionalInt attemptMark(int attempt) { return attempt == 0 ? OptionalInt.empty() : OptionalInt.of(attempt); }

    /** The W3C trace context the job was submitted with. */
    public Optional<TraceContext> traceContext() { return Optional.ofNullable(envelope.traceContext); }

    /** The id of the dead letter this message was replayed from. */
    public Optional<String> replayedFrom() { return Optional.ofNullable(envelope.replayedFrom); }

    /** The batch this job belongs to ({@link #BATCH}); null for a job of no batch: the one field a plain settle checks. */
    public UUID batch() { return envelope.batch; }

    /** The batch this callback job reports on ({@link #BATCH_CALLBACK}); empty for any other job. */
    public Optional<UUID> batchCallback() { return Optional.ofNullable(envelope.batchCallback); }

    /** The workflow this job belongs to ({@link #WORKFLOW}); null for a job of no workflow: the one field a plain settle checks. */
    public UUID workflow() { return envelope.workflow; }

    /** The headers the submitter gave (none of the {@link #RESERVED} names, but for a foreign value kept as it was). */
    public Map<String, String> userHeaders() { return headers; }

    /** This message with another attempt number and enqueue time (reclaim, replay). */
    public Message withAttempt(int newAttempt, Instant now) {
        return toBuilder().attempt(newAttempt).enqueuedAt(now).buildAsRead();
    }

    /** This message on another queue (a partition of its logical queue). */
    public Message withQueue(String newQueue) { return toBuilder().queue(newQueue).buildAsRead(); }

    /** This message under another id (a debounced job keeps the id of the one it replaces). */
    public Message withId(UUID newId) { return toBuilder().id(newId).buildAsRead(); }

    /** This message replayed from the dead letter {@code deadLetterId}. */
    public Message withReplayedFrom(String deadLetterId) {
        requireNotBlank("replayedFrom", Objects.requireNonNull(deadLetterId, "replayedFrom must not be null"));
        return toBuilder().replayedFrom(deadLetterId).buildAsRead();
    }

    /** This message with its attempt's concurrency turn come ({@code true}) or not. */
    public Message withTurn(boolean turn) { return toBuilder().turnAttempt(turn ? attempt : 0).buildAsRead(); }

    /** This message admitted by the rate limits for its attempt. */
    public Message withRateAdmitted() { return toBuilder().rateAdmittedAttempt(attempt).buildAsRead(); }

    @Override
    public boolean equals(Object o) {
        return o instanceof Message m && id.equals(m.id) && task.equals(m.task) && queue.equals(m.queue)
                && attempt == m.attempt && enqueuedAt.equals(m.enqueuedAt)
                && Arrays.equals(payload, m.payload) && envelope.equals(m.envelope) && headers.equals(m.headers);
    }

    @Override
    public int hashCode() {
        return Objects.hash(id, task, queue, attempt, enqueuedAt, Arrays.hashCode(payload), envelope, headers);
    }

    @Override
    public String toString() {
        String body = payload.length <= 64 ? new String(payload, StandardCharsets.UTF_8)
                : HexFormat.of().formatHex(payload, 0, 16) + "...(" + payload.length + " bytes)";
        return "Message[id=" + id + ", task=" + task + ", queue=" + queue + ", attempt=" + attempt
                + ", enqueuedAt=" + enqueuedAt + ", payload=" + body + ", headers=" + wireHeaders() + "]";
    }

    /** Builds a {@link Message}; {@link #build()} checks every field and names the first bad one. */
    public static final class Builder {
        private UUID id;
        private String task;
        private String queue;
        private int attempt = 1;
        private Instant enqueuedAt;
        private byte[] payload;
        private int priority = Priority.DEFAULT;
        private Duration trackFor;
        private String codec;
        private UniqueClaim unique;
        private String debounceKey;
        private String limitKey;
        private int rateAdmittedAttempt;
        private int turnAttempt;
        private TraceContext traceContext;
        private String replayedFrom;
        private UUID batch;
        private UUID batchCallback;
        private UUID workflow;
        /** The headers so far: a message's unmodifiable map (or none) until a header is set, then this builder's own copy. */
        private Map<String, String> headers = Map.of();
        private boolean ownHeaders;

        private Builder() { }

        /** The message id, a UUIDv7. */
        public Builder id(UUID id) {
            this.id = id;
            return this;
        }

        public Builder task(String task) {
            this.task = task;
            return this;
        }

        public Builder queue(String queue) {
            this.queue = queue;
            return this;
        }

        /** The attempt, from 1; 1 unless set. */
        public Builder attempt(int attempt) {
            this.attempt = attempt;
            return this;
        }

        /** When the message is put on its queue. */
        public Builder enqueuedAt(Instant enqueuedAt) {
            this.enqueuedAt = enqueuedAt;
            return this;
        }

        /** The encoded argument; not copied. */
        public Builder payload(byte[] payload) {
            this.payload = payload;
            return this;
        }

        /** The priority, 0 to 9; {@value Priority#DEFAULT} unless set. */
        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        /** How long the job's status and result are kept after it ends; null for an untracked job. */
        public Builder trackFor(Duration trackFor) {
            this.trackFor = trackFor;
            return this;
        }

        /** The id of the payload codec that wrote the payload; null for none. */
        public Builder codec(String codec) {
            this.codec = codec;
            return this;
        }

        /** The unique key the message claims; null for none. */
        public Builder unique(UniqueClaim unique) {
            this.unique = unique;
            return this;
        }

        /** The debounce key; null for none. */
        public Builder debounceKey(String debounceKey) {
            this.debounceKey = debounceKey;
            return this;
        }

        /** The limit key; null for none. */
        public Builder limitKey(String limitKey) {
            this.limitKey = limitKey;
            return this;
        }

        /** The attempt the rate limits admitted the message for; 0 for none. */
        public Builder rateAdmittedAttempt(int attempt) {
            this.rateAdmittedAttempt = attempt;
            return this;
        }

        /** The attempt whose concurrency turn came; 0 for none. */
        public Builder turnAttempt(int attempt) {
            this.turnAttempt = attempt;
            return this;
        }

        /** The W3C trace context; null for none. */
        public Builder traceContext(TraceContext traceContext) {
            this.traceContext = traceContext;
            return this;
        }

        /** The id of the dead letter the message is replayed from; null for none. */
        public Builder replayedFrom(String deadLetterId) {
            this.replayedFrom = deadLetterId;
            return this;
        }

        /** The batch the job belongs to; null for none. */
        public Builder batch(UUID batch) {
            this.batch = batch;
            return this;
        }

        /** The batch this callback job reports on; null for none. */
        public Builder batchCallback(UUID batch) {
            this.batchCallback = batch;
            return this;
        }

        /** The workflow the job belongs to; null for none. */
        public Builder workflow(UUID workflow) {
            this.workflow = workflow;
            return this;
        }

        /** One of the submitter's headers. */
        public Builder header(String name, String value) {
            ownHeaders().put(Objects.requireNonNull(name, "header name must not be null"),
                    Objects.requireNonNull(value, () -> "header '" + name + "' must not have a null value"));
            return this;
        }

        /** The submitter's headers, added to those set before. */
        public Builder headers(Map<String, String> headers) {
            if (!headers.isEmpty()) { // most submits have none
                headers.forEach(this::header);
            }
            return this;
        }

        /**
         * The message.
         *
         * @throws IllegalArgumentException naming the first invalid field: a priority outside 0 to 9,
         *     a retention that is not positive, a blank codec or key, a reserved name among the headers
         * @throws NullPointerException naming a missing id, task, queue, enqueuedAt or payload
         */
        public Message build() { return new Message(this, false); }

        /** The message as a broker read or changed it: its fields are taken as they came. */
        Message buildAsRead() { return new Message(this, true); }

        /** Keeps a header as it came from the wire, whatever its name: {@link WireHeaders} reads the rest. */
        void rawHeader(String name, String value) { ownHeaders().put(name, value); }

        /** The headers as a map this builder may change, copied from a message's on the first change. */
        private Map<String, String> ownHeaders() {
            if (!ownHeaders) {
                headers = new HashMap<>(headers);
                ownHeaders = true;
            }
            return headers;
        }
    }

    /** Puts the envelope's fields as wire headers, in the fixed order {@link #wireHeaders()} promises. */
    private void putReserved(Map<String, String> out) {
        Envelope e = envelope;
        add(out, CODEC, e.codec);
        add(out, TRACK, trackForMillis());
        add(out, PRIORITY, e.priority == Priority.DEFAULT ? null : Integer.toString(e.priority));
        add(out, UniqueClaim.HEADER, e.unique == null ? null : e.unique.headerValue());
        add(out, UniqueClaim.DEBOUNCE_HEADER, e.debounceKey);
        add(out, TaskLimits.KEY_HEADER, e.limitKey);
        add(out, FlowLimit.RATE_ADMITTED_HEADER, e.rateAdmittedAttempt == 0 ? null : Integer.toString(e.rateAdmittedAttempt));
        add(out, FlowLimit.TURN_HEADER, e.turnAttempt == 0 ? null : Integer.toString(e.turnAttempt));
        if (e.traceContext != null) {
            add(out, TraceContext.TRACEPARENT, e.traceContext.traceparent());
            add(out, TraceContext.TRACESTATE, e.traceContext.tracestate().isEmpty() ? null : e.traceContext.tracestate());
        }
        add(out, REPLAYED_FROM, e.replayedFrom);
        add(out, BATCH, e.batch == null ? null : e.batch.toString());
        add(out, BATCH_CALLBACK, e.batchCallback == null ? null : e.batchCallback.toString());
        add(out, WORKFLOW, e.workflow == null ? null : e.workflow.toString());
    }

    private static void add(Map<String, String> out, String name, String value) {
        if (value != null) {
            out.put(name, value);
        }
    }
}
