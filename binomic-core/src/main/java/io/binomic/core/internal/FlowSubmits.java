package io.binomic.core.internal;

import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskMode;
import io.binomic.api.Uniqueness;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.UniqueClaim;
import io.binomic.api.spi.UniqueSubmits;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The submit side of unique jobs and debounce: which key a job claims (given with the submit,
 * derived by its task, or else its encoded argument), when it is due, and which broker call stores
 * it. A submit that uses neither goes the usual way and costs nothing more.
 */
public final class FlowSubmits {
    /** An argument encoded in at most this many bytes is its own key; a longer one is keyed by its SHA-256. */
    private static final int ARGUMENT_KEY_MAX = 200;

    private FlowSubmits() { }

    /** When the job is due: null for at once, else after the submit's delay or the DELAY task's. */
    public static Instant dueAt(Task<?, ?> task, SubmitOptions options, Clock clock) {
        Optional<Duration> delay = options.delay().or(() -> task.mode() == TaskMode.DELAY ? task.delay() : Optional.empty());
        return delay.map(d -> DueTimes.notBefore(clock.instant().plus(d))).orElse(null);
    }

    /** True when the job is unique or debounced, so it must be stored by {@link #submit}. */
    public static boolean applies(Task<?, ?> task, SubmitOptions options) {
        return options.uniqueness().isPresent() || options.debounceKey().isPresent()
                || task.uniqueness().isPresent() || task.isDebounced();
    }

    /**
     * Stores a unique or debounced job; returns the id of the job the submit stands for (the
     * earlier job for a duplicate or a debounced replacement).
     */
    public static <A> Submitted submit(Task<A, ?> task, A argument, SubmitOptions options, Message message, Instant due, Broker broker,
                                       PartitionRouter router) {
        return submitAll(task, Collections.singletonList(argument), options, List.of(message), due, broker, router).getFirst(); // null: no argument
    }

    /**
     * A job stored by {@link #submit}: its id, the physical queue (partition) it went to, and, when
     * the submit merged into a job stored before instead of storing its own, the key it met there.
     *
     * @param id the id of the job the submit stands for
     * @param queue the physical queue of the job
     * @param merge null for a job of its own; else the key under which {@code id}, an earlier job's, was
     *        found: the unique key it holds (the duplicate was dropped) or the debounce key it waited under
     *        (it took the submit's argument); nothing new was queued
     */
    public record Submitted(UUID id, String queue, MergedKey merge) {
        /** A submit that stored its own message {@code id}. */
        public Submitted(UUID id, String queue) { this(id, queue, null); }

        /** True when {@code id} is an earlier job's. */
        public boolean merged() { return merge != null; }
    }

    /**
     * The key a merged submit met, as stored (given with the submit, derived by its task, or its encoded
     * argument): what the user needs to see why the submit merged, with the id of the job found.
     *
     * @param key the unique or debounce key
     * @param debounce true for a debounce key, false for a unique key
     */
    public record MergedKey(String key, boolean debounce) { }

    /**
     * {@link #submit} for many jobs of one task and options, in order. On a partitioned queue each
     * job goes to the partition its unique or debounce key picks, so the key's claim and every
     * duplicate of it live in one partition (one Redis Cluster slot).
     */
    public static <A> List<Submitted> submitAll(Task<A, ?> task, List<? extends A> arguments, SubmitOptions options, List<Message> messages,
                                                Instant due, Broker broker, PartitionRouter router) {
        if (options.partitionKey().isPresent()) {
            throw new IllegalArgumentException("task '" + task.name() + "': a unique or debounced job goes to the partition of its unique"
                    + " or debounce key, so it takes no partition key; leave SubmitOptions.partitionKey out");
        }
        Optional<Uniqueness> uniqueness = options.uniqueness().or(task::uniqueness);
        boolean debounced = options.debounceKey().isPresent() || (uniqueness.isEmpty() && task.isDebounced());
        // The task's declaration, not this submit, makes it unique: the fix is then on the submit's side only. The CLI
        // shows the SubmitOptions names as its own options (--debounce, --unique).
        if (options.uniqueness().isEmpty() && task.uniqueness().isPresent() && options.debounceKey().isPresent()) {
            throw new IllegalArgumentException("task '" + task.name() + "' is declared unique (Task.Builder.unique), so a debounce key"
                    + " (SubmitOptions.debounce) cannot apply to it: a duplicate of a unique job is dropped, one"
                    + " of a debounced job replaces it; leave the debounce key out (the declared unique key then merges duplicates), give"
                    + " the submit its own unique key instead (SubmitOptions.unique), or submit to a task that is not"
                    + " unique");
        }
        if (uniqueness.isPresent() && debounced && options.debounceKey().isPresent()) {
            throw new IllegalArgumentException("task '" + task.name() + "': unique and debounce are both asked for this submit: a"
                    + " duplicate of a unique job is dropped, one of a debounced job replaces it; keep one of them");
        }
        // A unique key would silently take the place of the task's debounce: the next plain submit, debounced, then finds
        // no job to replace and the key has two.
        if (options.uniqueness().isPresent() && task.isDebounced()) {
            throw new IllegalArgumentException("task '" + task.name() + "' is debounced (Task.Builder.debounce), and this submit asks"
                    + " for a unique key (SubmitOptions.unique): a duplicate of a unique job is dropped, one of"
                    + " a debounced job replaces it; leave the unique key out, or submit to a task that is not debounced");
        }
        List<Message> marked = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            A argument = arguments.get(i);
            Message m = messages.get(i);
            if (uniqueness.isPresent()) {
                marked.add(withUniqueClaim(task, argument, options, uniqueness.get(), m));
            } else {
                if (due == null) {
                    throw new IllegalArgumentException("task '" + task.name() + "': debounce needs a delay, and this job has none:"
                            + " declare a DELAY task, or give SubmitOptions.delay");
                }
                String key = options.debounceKey().or(() -> task.debounceKeyOf(argument)).orElseThrow();
                marked.add(m.toBuilder().debounceKey(key).build()); // partition 0, as unique jobs
            }
        }
        List<Submitted> out = new ArrayList<>(marked.size());
        if (uniqueness.isPresent()) {
            List<UUID> ids = uniqueSubmits(broker).submitAllUnique(marked, due);
            for (int i = 0; i < ids.size(); i++) {
                // Null: the message's own id held its key, a store repeated after a broken connection.
                UUID own = marked.get(i).id();
                UUID id = ids.get(i) == null ? own : ids.get(i);
                out.add(new Submitted(id, marked.get(i).queue(),
                        id.equals(own) ? null : new MergedKey(marked.get(i).unique().orElseThrow().key(), false)));
            }
            return out;
        }
        for (Message m : marked) {
            UUID id = uniqueSubmits(broker).submitDebounced(m, due);
            out.add(new Submitted(id, m.queue(), id.equals(m.id()) ? null : new MergedKey(m.debounceKey().orElseThrow(), true)));
        }
        return out;
    }

    /**
     * {@code message} with the claim of its unique key: the key given with the submit, else the one
     * its task derives from {@code argument}, else its encoded argument.
     */
    public static <A> Message withUniqueClaim(Task<A, ?> task, A argument, SubmitOptions options, Uniqueness uniqueness, Message message) {
        String key = options.uniqueKey().or(() -> task.uniqueKeyOf(argument)).orElseGet(() -> argumentKey(message.payload()));
        // Partition 0 whatever the partition count: a key hashed over the count would move when the
        // count changes, and its duplicates would no longer meet its claim (they ran twice).
        return message.toBuilder().unique(new UniqueClaim(uniqueness.scope(), uniqueness.ttl(), key)).build();
    }

    private static UniqueSubmits uniqueSubmits(Broker broker) {
        return Capabilities.require(broker, UniqueSubmits.class, "unique and debounced jobs cannot be submitted");
    }

    /** The argument as its own key: its JSON when short, else its SHA-256. */
    static String argumentKey(byte[] payload) {
        if (payload.length <= ARGUMENT_KEY_MAX) {
            return new String(payload, StandardCharsets.UTF_8);
        }
        try {
            return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(payload));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("this JVM has no SHA-256", e);
        }
    }
}
