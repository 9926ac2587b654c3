package io.binomic.redis.internal;

import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.spi.Message;
import io.binomic.api.NotReplicatedException;
import io.binomic.api.PayloadTooLargeException;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.redisson.api.BatchOptions;
import org.redisson.api.BatchResult;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.stream.StreamCreateGroupArgs;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisException;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.RedisReadonlyException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.RedisWaitException;
import org.redisson.client.codec.Codec;
import org.redisson.client.codec.StringCodec;

/**
 * What the parts of the Redis broker share: its configuration, its connection once started, the
 * keys of a queue, and the plumbing every command goes through (a failure that says what failed
 * and where, retries of a producer's write when the connection fails under it, {@code WAIT} for
 * replicas when {@code wait.replicas} asks for it, the reload of the Lua scripts after
 * {@code NOSCRIPT}). The capabilities ({@link RedisJobStore}, {@link RedisPausing}, ...) each hold
 * this, not the broker.
 */
final class RedisContext {
    /** The broker's one log category: its parts log as the broker. */
    static final System.Logger LOG = System.getLogger(RedisBroker.class.getName());
    static final int BULK_CHUNK = 1000;
    private static final int PRODUCER_TRIES = 3;
    /**
     * What protects a job from a second submit: a submit mints a new message id, so only a unique
     * key tells Redis that two submits are one job.
     */
    static final String RESUBMIT = "a job submitted again is a second job, with a new message id, unless its task or submit has"
            + " a unique key (Task.Builder.unique, SubmitOptions.Builder.unique), which makes a second submit return the first job";
    /** What an idempotent producer's write (a unique submit, a schedule) that got no answer may still do. */
    private static final String WRITE_UNCONFIRMED = ". The write may still take effect if Redis resumes (sending it again"
            + " changes nothing more); " + RESUBMIT;
    /** How Redis' error starts for a blocked command (a WAIT) it ended because the node turned into a replica. */
    private static final String UNBLOCKED = "UNBLOCKED";
    /** The pause before sending again a write whose primary was replaced: about Redisson's topology scan interval. */
    private static final long FAILOVER_PAUSE_MILLIS = 500;
    private static final Duration FAILOVER_PAUSE = Duration.ofMillis(FAILOVER_PAUSE_MILLIS);
    /** How Redisson's message starts when it found no connection to send a command on. */
    static final String NO_CONNECTION = "Unable to acquire connection";

    static final String SUBMIT_AGAIN = "it may or may not survive a failover; " + RESUBMIT;
    static final String SETTLE_AGAIN = "the worker sends the outcomes again (a settlement already applied is a no-op)";
    static final String MOVE_AGAIN = "the messages are on the primary's stream; if it fails over before they reach a"
            + " replica they are still due in the replica's delayed set and move again";
    static final String TICK_AGAIN = "if the primary fails over before it reaches a replica, the tick fires again";
    static final String REPLAY_AGAIN = "if the primary fails over before they reach a replica, they are dead letters again";

    final BrokerConfig config;
    final RedissonSetup setup;
    /** Opt-in: replicas that must confirm each enqueue and settlement ({@code WAIT}); off by default. */
    final RedissonSetup.ReplicaWait replicaWait;
    final EvictionPolicyCheck evictionPolicy;
    /** How a write that must not run twice (an enqueue, a batch's or a workflow's submit) is sent: at most once a call. */
    final WriteOnce writeOnce = new WriteOnce(this);
    private volatile RedissonClient client;
    private volatile boolean closed;

    RedisContext(BrokerConfig config) {
        this.config = config;
        this.setup = RedissonSetup.of(config);
        this.evictionPolicy = new EvictionPolicyCheck(config, setup.target());
        this.replicaWait = setup.replicaWait();
    }

    /** Fails unless the connection may be made: never made before, and not closed. The broker's start and close hold its lock. */
    void checkStartable() {
        if (client != null || closed) {
            throw new IllegalStateException(closed ? "the Redis broker is closed" : "the Redis broker is already started");
        }
    }

    /** The connection every command uses from now on. */
    void connected(RedissonClient started) {
        client = started;
    }

    /** The connection to shut down, null when there is none or it was closed already; every command fails from now on. */
    RedissonClient disconnect() {
        if (closed) {
            return null;
        }
        closed = true;
        RedissonClient c = client;
        client = null;
        return c;
    }

    RedissonClient client() {
        RedissonClient c = client;
        if (c == null) {
            throw new IllegalStateException(closed ? "the Redis broker is closed" : "the Redis broker is not started: call start() first");
        }
        return c;
    }

    RedisKeys keys(String queue) { return new RedisKeys(config.keyPrefix(), queue); }

    void checkSize(Message message) {
        if (message.payload().length > config.maxPayloadBytes()) {
            throw new PayloadTooLargeException(message.task(), message.payload().length, config.maxPayloadBytes());
        }
    }

    /** Creates the stream and the group reading it from the start (so nothing enqueued earlier is skipped). */
    void createGroup(RedissonClient redisson, String queue) {
        try {
            redisson.getStream(keys(queue).stream(), StringCodec.INSTANCE)
                    .createGroup(StreamCreateGroupArgs.name(RedisKeys.GROUP).id(StreamMessageId.ALL).makeStream());
        } catch (RuntimeException e) {
            if (!String.valueOf(e.getMessage()).contains("BUSYGROUP")) {
                throw e;
            }
        }
    }

    /** {@link #producerWrite} of a script (a tracked enqueue, a unique submit): its reply. */
    <R> R writeScriptRetryingBrokenConnections(String what, String script, RScript.ReturnType type, List<Object> keys,
                                               Object... args) {
        return producerWrite(what, batch -> batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, script, type,
                keys, args), () -> client().getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, script, type, keys, args));
    }

    /**
     * A producer's write of one command, tried again when the connection fails under it: {@code direct}
     * alone, or, when {@code wait.replicas} asks for it, {@code batched} in a pipeline ending in WAIT. Its reply.
     */
    @SuppressWarnings("unchecked")
    <R> R producerWrite(String what, Consumer<RBatch> batched, Supplier<? extends CompletionStage<? extends R>> direct) {
        return replicaWait.on() ? (R) producerPipeline(what, batched).getFirst() : callRetryingBrokenConnections(what, direct);
    }

    /**
     * The replies of a producer's pipeline of writes, ending in WAIT when {@code wait.replicas} asks for
     * it ({@link #confirmed}), tried again when the connection fails under it.
     */
    List<?> producerPipeline(String what, Consumer<RBatch> commands) {
        BatchResult<?> result = callRetryingBrokenConnections(what, () -> batch(writeOptions(), commands).executeAsync());
        return confirmed(what, SUBMIT_AGAIN, result).getResponses();
    }

    /** A pipeline of {@code options} holding what {@code commands} adds to it, not sent yet. */
    private RBatch batch(BatchOptions options, Consumer<RBatch> commands) {
        RBatch batch = client().createBatch(options);
        commands.accept(batch);
        return batch;
    }

    /**
     * Options of a pipeline that writes: with {@code wait.replicas}, ending in {@code WAIT}, with
     * Redisson's retries off, and a reply timeout allowing for the wait. A {@code WAIT} counts the
     * replicas that reached the writes of its own connection on its own node: it confirms the
     * pipeline only if every write ran there, before it, on that connection. Redisson's retries
     * resend only the commands of a pipeline that failed: a {@code WAIT} refused by a primary just
     * demoted (which had taken the writes, then dropped them resyncing from its replacement) went
     * alone to the new primary and confirmed writes it never saw, and a {@code READONLY} write went
     * there with the {@code WAIT}, leaving the writes before it behind. With no retries such a
     * pipeline fails as a whole, and the producer sends all of it again ({@link #callRetryingBrokenConnections}).
     * A {@code MOVED} reply is followed whatever the retries: on a Cluster, writes that must not be
     * split are one command (one script per queue and chunk: {@link RedisBroker#enqueueAll}).
     */
    BatchOptions writeOptions() {
        if (!replicaWait.on()) {
            return BatchOptions.defaults();
        }
        return BatchOptions.defaults().retryAttempts(0).sync(replicaWait.replicas(), replicaWait.timeout())
                .responseTimeout(config.commandTimeout().plus(replicaWait.timeout()).toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Options of an {@link RedisBroker#enqueueAll} chunk: {@link #writeOptions} with {@code wait.replicas};
     * otherwise without Redisson's retries, which would resend a whole chunk whose reply is late, into
     * the socket of a frozen server, and go on after the call failed.
     */
    BatchOptions enqueueAllOptions() {
        return replicaWait.on() ? writeOptions() : BatchOptions.defaults().retryAttempts(0);
    }

    /**
     * The batch's result, if the replicas {@code wait.replicas} asks for confirmed it; otherwise a
     * {@link NotReplicatedException} saying what happens if it is tried again ({@code consequence}).
     */
    <R> BatchResult<R> confirmed(String what, String consequence, BatchResult<R> result) {
        if (replicaWait.on() && result.getSyncedSlaves() < replicaWait.replicas()) {
            throw new NotReplicatedException("Redis " + what + " at " + setup.target() + " was written to the primary, but only "
                    + result.getSyncedSlaves() + " of the " + replicaWait.replicas() + " replicas required (BrokerConfig option "
                    + RedissonSetup.WAIT_REPLICAS_OPTION + ") confirmed it within " + replicaWait.timeout().toMillis() + " ms ("
                    + RedissonSetup.WAIT_TIMEOUT_OPTION + "): " + consequence, result.getSyncedSlaves(), replicaWait.replicas());
        }
        return result;
    }

    /** The commands {@code commands} adds to one pipeline, as one round trip: their replies, in order. */
    List<?> pipeline(String what, Consumer<RBatch> commands) {
        return call(what, () -> batch(BatchOptions.defaults(), commands).execute().getResponses());
    }

    /**
     * {@link #pipeline} given at most the command timeout in all, Redisson's retries included: for a
     * read on the submit path, which would otherwise add those retries to the submit's bound. Past
     * it, the failure says Redis did not answer the {@code bounded}.
     */
    private List<?> boundedPipeline(String what, String bounded, Consumer<RBatch> commands) {
        long deadline = System.nanoTime() + config.commandTimeout().toNanos();
        return call(what, () -> within(bounded, batch(BatchOptions.defaults(), commands).executeAsync(), deadline, "").getResponses());
    }

    /** {@link #pipeline} of writes, ending in WAIT when {@code wait.replicas} asks for it ({@link #confirmed}). */
    List<?> pipelineWrite(String what, String consequence, Consumer<RBatch> commands) {
        return call(what, () -> confirmed(what, consequence, batch(writeOptions(), commands).execute()).getResponses());
    }

    /**
     * {@link #pipelineWrite} of writes that may be applied twice (a worker's settle), sent again as soon as
     * Redis answers {@code probeKey}'s node after a freeze rather than at the end of Redisson's command
     * timeout ({@link ResendWhenAnswered}); {@code commands} adds the same commands to each try.
     */
    List<?> pipelineWriteResent(String what, String consequence, String probeKey, Consumer<RBatch> commands) {
        return call(what, () -> confirmed(what, consequence, ResendWhenAnswered.send(this, what, probeKey,
                () -> batch(writeOptions(), commands).executeAsync().toCompletableFuture())).getResponses());
    }

    /**
     * The {@code what} of each queue that has it: the hash {@code key} names, one HGETALL per queue,
     * all in one pipeline ({@link #boundedPipeline} when {@code bounded}). A hash that does not decode
     * was edited by hand: it is logged, saying which and {@code setAgain} (the command that sets it
     * again), and left out rather than stop every worker.
     */
    <V> Map<String, V> readHashes(String what, List<String> queues, Function<RedisKeys, String> key,
                                  Function<Map<?, ?>, V> decode, String setAgain, boolean bounded) {
        String read = "read the " + what + " of " + queues;
        Consumer<RBatch> commands = batch -> queues.forEach(q ->
                batch.<String, String>getMap(key.apply(keys(q)), StringCodec.INSTANCE).readAllMapAsync());
        List<?> replies = bounded ? boundedPipeline(read, "read of the " + what + " of " + queues, commands)
                : pipeline(read, commands);
        Map<String, V> out = new LinkedHashMap<>();
        for (int i = 0; i < queues.size(); i++) {
            if (replies.get(i) instanceof Map<?, ?> fields && !fields.isEmpty()) {
                try {
                    out.put(queues.get(i), decode.apply(fields));
                } catch (RuntimeException e) {
                    LOG.log(System.Logger.Level.WARNING, "ignoring the " + what + " of queue {0}: {1} ({2}); set them again with: "
                            + setAgain, queues.get(i), fields, e.getMessage());
                }
            }
        }
        return out;
    }

    /** {@link #eval} for a script that writes: the same call when waiting is off, a pipeline ending in WAIT when on. */
    @SuppressWarnings("unchecked")
    <R> R evalWrite(String what, String consequence, String script, RScript.ReturnType type, List<Object> keys,
                    Object... args) {
        if (!replicaWait.on()) {
            return eval(what, script, type, keys, args);
        }
        return (R) pipelineWrite(what, consequence, batch -> batch.getScript(StringCodec.INSTANCE)
                .evalAsync(RScript.Mode.READ_WRITE, script, type, keys, args)).getFirst();
    }

    <R> R eval(String what, String script, RScript.ReturnType type, List<Object> keys, Object... args) {
        return call(what, () -> client().getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_WRITE, script, type, keys, args));
    }

    /**
     * {@link #eval} of a read sent once: none of Redisson's retries, and no reply awaited past
     * {@code deadline} ({@link System#nanoTime()}), which is all of {@code bound} a caller gave
     * its reads. For a read whose answer is advice, where Redisson's retries would hold the
     * caller several command timeouts on a frozen Redis.
     */
    <R> R evalOnce(String what, long deadline, Duration bound, String script, RScript.ReturnType type, List<Object> keys,
                   Object... args) {
        return call(what, () -> {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw onceTooLate(what, bound, null);
            }
            return awaitReply(what, client().getScript(WriteOnce.onceScript(Duration.ofNanos(left)))
                    .<R>evalAsync(RScript.Mode.READ_WRITE, script, type, keys, args), deadline, e -> onceTooLate(what, bound, e));
        });
    }

    private BrokerException onceTooLate(String what, Duration bound, Throwable cause) {
        return new BrokerException("Redis at " + setup.target() + " did not answer the " + what + " within " + bound.toMillis()
                + " ms, asked once: Redis is stopped, frozen, slow or unreachable", cause);
    }

    /** {@link #eval} of a script returning stream entries: strings come back as bytes ({@link #replyText}), integers as numbers. */
    <R> R evalEntries(String what, String script, RScript.ReturnType type, List<Object> keys, Object... args) {
        return call(what, () -> client().getScript(EntryCodec.INSTANCE).eval(RScript.Mode.READ_WRITE, script, type, keys, args));
    }

    /**
     * {@link #eval} of a script that only reads, or writes nothing more when sent again (the read of a
     * queue's levels), sent again as soon as Redis answers the node of its first key while this read is
     * not answered ({@link ResendWhenAnswered}): for the reads of a worker's search for lost reads and of
     * its reclaim, which one connection that lost its reply would otherwise hold for the command timeout.
     */
    <R> R evalResent(String what, String script, RScript.ReturnType type, List<Object> keys, Object... args) {
        return resentRead(what, StringCodec.INSTANCE, script, type, keys, args);
    }

    /** {@link #evalResent} of a script returning stream entries, decoded as {@link #evalEntries}' are. */
    <R> R evalEntriesResent(String what, String script, RScript.ReturnType type, List<Object> keys, Object... args) {
        return resentRead(what, EntryCodec.INSTANCE, script, type, keys, args);
    }

    private <R> R resentRead(String what, Codec codec, String script, RScript.ReturnType type,
                             List<Object> keys, Object... args) {
        return call(what, () -> ResendWhenAnswered.sendRead(this, what, String.valueOf(keys.getFirst()),
                () -> client().getScript(codec).<R>evalAsync(RScript.Mode.READ_WRITE, script, type, keys, args).toCompletableFuture()));
    }

    /** Runs a Redis operation, turning Redisson's exceptions into {@link BrokerException}s that say what failed. */
    <R> R call(String what, Supplier<R> operation) {
        evictionPolicy.recheckIfDue(this::client, setup.redisson());
        try {
            return operation.get();
        } catch (RuntimeException e) {
            throw failed(what, e);
        }
    }

    /**
     * {@link #call} for a producer's write that is idempotent (a unique submit, a schedule, a pause),
     * sent with Redisson's async API ({@code command}), given at most {@link #producerBound()} and
     * tried up to {@value #PRODUCER_TRIES} times within it when the connection fails under it: a try
     * that did land before makes the next one change nothing. An enqueue, a batch's or a workflow's
     * submit and an add to a batch are not idempotent and go through {@link WriteOnce}. With
     * {@code wait.replicas}, a pipeline (theirs too) is sent again, whole, {@value #FAILOVER_PAUSE_MILLIS} ms
     * apart for as long as the bound allows, both when the connection fails and when its primary was
     * replaced under it ({@link #primaryReplaced}).
     */
    <R> R callRetryingBrokenConnections(String what, Supplier<? extends CompletionStage<? extends R>> command) {
        evictionPolicy.recheckIfDue(this::client, setup.redisson());
        long deadline = System.nanoTime() + producerBound().toNanos();
        for (int attempt = 1; ; attempt++) {
            try {
                return within(what, command.get(), deadline, WRITE_UNCONFIRMED);
            } catch (RedisTimeoutException | RedisConnectionException e) {
                // A pipeline waiting for replicas has no retries of Redisson's (writeOptions), which
                // would otherwise ride out a reconnection or a failover: it is tried again here,
                // after a pause, for as long as the bound allows.
                boolean waiting = replicaWait.on();
                if (waiting ? System.nanoTime() + FAILOVER_PAUSE.toNanos() - deadline >= 0
                        : attempt >= PRODUCER_TRIES || System.nanoTime() - deadline >= 0) {
                    throw failure(what, e);
                }
                LOG.log(System.Logger.Level.WARNING, "Redis {0} failed ({1}); trying again", what, e.getMessage());
                if (waiting) {
                    pause(what, e, FAILOVER_PAUSE);
                }
            } catch (RuntimeException e) {
                // Sent again whole, to the primary as the client sees it after a pause: its view of the
                // topology lags the failover by up to a scan interval.
                if (!primaryReplaced(e) || System.nanoTime() + FAILOVER_PAUSE.toNanos() - deadline >= 0) {
                    throw failed(what, e);
                }
                LOG.log(System.Logger.Level.WARNING, "Redis {0} was not confirmed ({1}); sending it again", what,
                        RedissonSetup.rootMessage(e));
                pause(what, e, FAILOVER_PAUSE);
            }
        }
    }

    /**
     * True when a pipeline that waits for replicas ({@link #writeOptions}) failed because its node
     * is no longer the primary, so that nothing of it is confirmed: it refused {@code WAIT} (a
     * demoted primary; the writes it took are dropped when it resyncs from the new one) or a write
     * ({@code READONLY}), or it ended a {@code WAIT} under way when it was demoted ({@code UNBLOCKED}).
     */
    static boolean primaryReplaced(Throwable e) {
        return causedBy(e, RedisWaitException.class) || causedBy(e, RedisReadonlyException.class) || unblocked(e);
    }

    private static boolean unblocked(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (String.valueOf(c.getMessage()).startsWith(UNBLOCKED)
                    || Arrays.stream(c.getSuppressed()).anyMatch(s -> String.valueOf(s.getMessage()).startsWith(UNBLOCKED))) {
                return true;
            }
        }
        return false;
    }

    static void pause(String what, RuntimeException failure, Duration pause) {
        try {
            Thread.sleep(pause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failure.addSuppressed(e);
            throw new BrokerException("interrupted while sending the Redis " + what + " again", failure);
        }
    }

    /** What the caller of {@code what} gets for {@code e}: ours as it is, Redisson's as a {@link #failure}. */
    RuntimeException failed(String what, RuntimeException e) {
        if (e instanceof BrokerException || e instanceof IllegalStateException || e instanceof IllegalArgumentException) {
            return e;
        }
        if (e instanceof CompletionException && e.getCause() instanceof BrokerException own) {
            return own; // ours, from a pipeline's callback (NotReplicatedException): already says what and where
        }
        if (causedBy(e, RedisNoScriptException.class)) {
            // Nothing in the failed pipeline ran its script; the caller's own retry finds them loaded.
            reloadScripts(what);
        }
        return failure(what, e);
    }

    /**
     * The longest a producer's write blocks, its tries on a broken connection included: the command
     * timeout, and the replicas' {@code wait.timeout} when {@code wait.replicas} asks for them.
     * Redisson's own retries (connection acquisition, reconnection, resends) would otherwise add up
     * to several times the command timeout while Redis is frozen, with a submitting request thread
     * waiting all along.
     */
    Duration producerBound() {
        return replicaWait.on() ? config.commandTimeout().plus(replicaWait.timeout()) : config.commandTimeout();
    }

    /**
     * The reply of {@code command} (sent with Redisson's async API), waited for until {@code deadline}
     * ({@link System#nanoTime()}): no thread waits but the caller's. Past it the command is cancelled
     * and the failure says Redis did not answer, and {@code consequence}. Cancelling stops Redisson's
     * retries of a single command (XADD, ZADD); those of a pipeline or a script (its future is not the
     * command's: Redisson sends scripts by SHA) go on within Redisson's own retry settings, their reply
     * unread: a write sent once has none ({@link WriteOnce}). A command already sent may still take effect.
     */
    <R> R within(String what, CompletionStage<? extends R> command, long deadline, String consequence) {
        return awaitReply(what, command, deadline, e -> noAnswer(what, consequence, e));
    }

    /** {@link #within}, failing with {@code late} when there is no reply by {@code deadline}. */
    private <R> R awaitReply(String what, CompletionStage<? extends R> command, long deadline,
                             Function<TimeoutException, BrokerException> late) {
        CompletableFuture<? extends R> reply = command.toCompletableFuture();
        try {
            return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            // As Redisson's blocking call throws it (CommandAsyncService.convertException), for the caller's handling.
            throw e.getCause() instanceof RedisException r ? r : new RedisException("Unexpected exception while processing command",
                    e.getCause());
        } catch (TimeoutException e) {
            reply.cancel(true);
            throw late.apply(e);
        } catch (InterruptedException e) {
            reply.cancel(true);
            Thread.currentThread().interrupt();
            throw new BrokerException("interrupted while waiting for Redis at " + setup.target() + " to answer the " + what, e);
        }
    }

    /**
     * Redis did not answer {@code what} in time; {@code consequence}, when not empty, says what became
     * of the write (and that the bound is a producer's, {@link #producerBound()}).
     */
    BrokerException noAnswer(String what, String consequence, Throwable cause) {
        boolean write = !consequence.isEmpty();
        return new BrokerException("Redis at " + setup.target() + " did not answer the " + what + " within "
                + (write ? producerBound() : config.commandTimeout()).toMillis() + " ms (BrokerConfig.commandTimeout"
                + (write && replicaWait.on() ? " plus option " + RedissonSetup.WAIT_TIMEOUT_OPTION : "")
                + "): Redis is stopped, frozen or unreachable" + consequence, cause);
    }

    /**
     * True when {@code e} is Redis not answering (a timeout, a connection refused or lost), not one
     * queue's keys refusing a command: then every queue fails alike, and the worker's own outage
     * handling applies rather than one queue sitting out.
     */
    static boolean serverUnreachable(Throwable e) {
        return causedBy(e, RedisTimeoutException.class) || causedBy(e, RedisConnectionException.class);
    }

    static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c) || Arrays.stream(c.getSuppressed()).anyMatch(type::isInstance)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Loads every script on {@code redisson}'s server(s) (every master of a cluster), at start. Redisson
     * sends a pipelined script by SHA once it has loaded it on an address, and remembers that for the
     * whole JVM by address: a Redis restarted without persistence, or another server later on the same
     * host and port, has none of them, and the first pipelined settle or submit would fail with
     * NOSCRIPT. A user whose ACL lacks {@code script|load} (a reader) runs no pipelined script.
     */
    void loadScripts(RedissonClient redisson) {
        try {
            RScript scripts = redisson.getScript(StringCodec.INSTANCE);
            long deadline = System.nanoTime() + config.commandTimeout().toNanos();
            LuaScripts.ALL.stream().map(scripts::scriptLoadAsync).toList()
                    .forEach(loaded -> within("load of the broker's Lua scripts", loaded, deadline, ""));
        } catch (RuntimeException e) {
            LOG.log(PermissionReplies.isRefused(e) ? System.Logger.Level.DEBUG : System.Logger.Level.WARNING,
                    "Redis at {0}: loading the broker''s Lua scripts at start failed ({1}); each is loaded when first sent",
                    setup.target(), RedissonSetup.rootMessage(e));
        }
    }

    /**
     * Redis does not replicate its script cache: after a failover (or a restart, or SCRIPT FLUSH) the
     * primary has none, and Redisson, which sends pipelined scripts by SHA, does not reload them, so
     * every settle pipeline would fail until something else happened to load its script.
     */
    private void reloadScripts(String what) {
        try {
            RScript scripts = client().getScript(StringCodec.INSTANCE);
            LuaScripts.ALL.forEach(scripts::scriptLoad);
            LOG.log(System.Logger.Level.WARNING, "Redis at {0} had lost the broker''s Lua scripts ({1} failed with NOSCRIPT: a"
                    + " failover, a restart or SCRIPT FLUSH); loaded them again", setup.target(), what);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "Redis at {0}: loading the broker''s Lua scripts again failed: {1}", setup.target(),
                    e.getMessage());
        }
    }

    BrokerException failure(String what, Throwable cause) {
        Throwable c = cause instanceof CompletionException && cause.getCause() != null ? cause.getCause() : cause;
        if (OutOfMemoryReplies.isOutOfMemory(c)) {
            return OutOfMemoryReplies.failure(setup.target(), what, c);
        }
        if (PermissionReplies.isRefused(c)) {
            return PermissionReplies.failure(setup.target(), user(), what, c);
        }
        if (primaryReplaced(c)) {
            return new BrokerException("Redis " + what + " at " + setup.target() + " is not confirmed: the node refused "
                    + (causedBy(c, RedisReadonlyException.class) ? "a write" : "WAIT") + ", it is no longer the primary (a failover"
                    + " replaced it; what it took is dropped when it resyncs from the new one); sending it again may apply twice"
                    + " what did reach the new primary (an enqueue twice, with the same message id): "
                    + RedissonSetup.rootMessage(c), c);
        }
        if (RedissonSetup.rootMessage(c).startsWith("LOADING")) {
            // Redis answers LOADING before it runs anything: the caller may send it again without doing it twice.
            return new BrokerException("Redis " + what + " failed at " + setup.target() + ": " + RedissonSetup.rootMessage(c)
                    + "; Redis refused it before running it, while loading its data after a restart: nothing of it took effect"
                    + " (not enqueued, not written), and calling again once Redis has loaded does it once", c);
        }
        if (causedBy(c, RedisTimeoutException.class) && RedissonSetup.rootMessage(c).startsWith(NO_CONNECTION)) {
            // Redisson suggests a bigger pool; while Redis does not answer, no pool size would help.
            return new BrokerException("Redis " + what + " failed at " + setup.target() + ": no connection to Redis became"
                    + " ready, Redis does not answer (stopped, frozen or unreachable); nothing was sent", c);
        }
        return new BrokerException("Redis " + what + " failed at " + setup.target() + ": " + RedissonSetup.rootMessage(c), c);
    }

    /** The ACL user the broker connects as, for messages: {@code default} when none is configured. */
    String user() {
        String named = config.username().orElse(setup.redisson().getUsername());
        return named == null ? "default" : named;
    }
}
