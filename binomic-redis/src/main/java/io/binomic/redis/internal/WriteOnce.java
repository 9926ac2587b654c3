package io.binomic.redis.internal;

import io.binomic.api.BrokerException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Function;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.options.OptionalOptions;
import org.redisson.api.options.PlainOptions;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisReconnectedException;
import org.redisson.client.RedisResponseTimeoutException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.codec.Codec;
import org.redisson.client.codec.StringCodec;

/**
 * A producer's write that must not run twice, sent so that it reaches Redis at most once per call,
 * and failing with what became of it: not done, or maybe once ({@link Effect}). An enqueue adds a
 * stream entry each time it runs (an XADD, the tracked and priority-level enqueue scripts); a
 * batch's or a workflow's submit creates it with its jobs (run again, it finds it exists and fails,
 * although created); an add to an open batch adds its jobs. Idempotent writes (a unique submit, a
 * schedule) go through {@link RedisContext#producerWrite}, which may resend them.
 */
final class WriteOnce {
    /**
     * What a write does, in the words of its failure: {@code mayHave} when a try may have reached
     * Redis, {@code hasNot} when none did, each naming what the write makes (its ids), and
     * {@code again} what calling again does.
     */
    record Effect(String mayHave, String hasNot, String again) {
        /** An enqueue of {@code messages} (such as {@code message id <id>}). */
        static Effect enqueue(String messages) {
            return new Effect("It may have been enqueued once, with " + messages, "It was not enqueued (" + messages + ")",
                    RedisContext.RESUBMIT);
        }

        /** The submit that creates {@code named} (such as {@code batch id <id>}). */
        static Effect create(String named, String again) {
            return new Effect("It may have been created once, with " + named, "It was not created (" + named + ")", again);
        }

        /** An add of the jobs {@code named} (such as {@code job id <id>}). */
        static Effect add(String named, String again) {
            return new Effect("It may have been added once, with " + named, "It was not added (" + named + ")", again);
        }
    }

    /** The pause before sending again a write that never left the client ({@link #notSent}). */
    private static final Duration RESEND_PAUSE = Duration.ofMillis(200);
    /**
     * At most this much of a write's bound is kept from Redisson's timeout of its last try, so that
     * Redisson's own failure, which tells a command never sent from one sent and unanswered, comes
     * before the caller's deadline (Redisson's timer ticks every 10-100 ms).
     */
    private static final Duration REDISSON_MARGIN = Duration.ofMillis(250);
    /** The shortest try worth sending. */
    private static final Duration MIN_TRY = Duration.ofMillis(20);
    /** How Redisson's message starts when it gave up writing a command into a connection (and took it back). */
    private static final String NOT_WRITTEN = "Command still hasn't been written";

    private final RedisContext redis;

    WriteOnce(RedisContext redis) {
        this.redis = redis;
    }

    /**
     * A write that must not run twice, of {@code effect}, sent to Redis at most once: Redisson's
     * retries are off for it ({@link #once}), since they resend a command whose reply is late into the
     * socket of a frozen server, where every copy runs at the thaw, and go on after the caller was
     * told it failed. It is sent again here only while no try left the client ({@link #notSent}:
     * Redis refused the connection, none became ready, the write failed), a pause apart, within
     * {@link RedisContext#producerBound()}; each try gets Redisson's timeout for what is left of it, so
     * that its failure says what became of the try. The failure says whether the write took effect:
     * not, or maybe once. {@code direct} sends one try given that timeout. With {@code wait.replicas},
     * {@code batched} in a {@link RedisContext#producerPipeline}, which sends the pipeline again until a
     * replica confirms it (a batch's or a workflow's submit script takes a resend of itself as done).
     */
    @SuppressWarnings("unchecked")
    <R> R send(String what, Effect effect, Consumer<RBatch> batched,
                      Function<Duration, ? extends CompletionStage<? extends R>> direct) {
        if (redis.replicaWait.on()) {
            return (R) redis.producerPipeline(what, batched).getFirst();
        }
        redis.evictionPolicy.recheckIfDue(redis::client, redis.setup.redisson());
        Duration bound = redis.producerBound();
        long deadline = System.nanoTime() + bound.toNanos();
        long margin = Math.min(REDISSON_MARGIN.toNanos(), bound.toNanos() / 4);
        String maybe = ". " + effect.mayHave() + ", and is not sent again, by this call or later; " + effect.again();
        while (true) {
            Duration left = Duration.ofNanos(deadline - System.nanoTime() - margin);
            try {
                return redis.within(what, direct.apply(left), deadline, maybe);
            } catch (BrokerException e) {
                throw e; // within's: no answer by the deadline
            } catch (RuntimeException e) {
                if (!notSent(e)) {
                    throw RedisContext.serverUnreachable(e) || RedisContext.causedBy(e, RedisReconnectedException.class) ? redis.noAnswer(what, maybe, e)
                            : redis.failed(what, e);
                }
                if (deadline - System.nanoTime() - margin - RESEND_PAUSE.toNanos() < MIN_TRY.toNanos()) {
                    throw redis.noAnswer(what, ". " + effect.hasNot() + ": no try reached Redis (" + unsentReason(e)
                            + "), and none is sent later", e);
                }
                RedisContext.LOG.log(System.Logger.Level.DEBUG, "Redis {0} was not sent ({1}); trying again", what, RedissonSetup.rootMessage(e));
                RedisContext.pause(what, e, RESEND_PAUSE);
            }
        }
    }

    /**
     * The options of a try of {@link #send}: object {@code name} read with {@code codec}, no
     * retries of Redisson's, and Redisson's timeout {@code timeout} (at least 1 ms).
     */
    static PlainOptions once(String name, Codec codec, Duration timeout) {
        return PlainOptions.name(name).codec(codec).retryAttempts(0).timeout(atLeastOneMilli(timeout));
    }

    /** {@link #once} of a script. */
    static OptionalOptions onceScript(Duration timeout) {
        return OptionalOptions.defaults().codec(StringCodec.INSTANCE).retryAttempts(0).timeout(atLeastOneMilli(timeout));
    }

    private static Duration atLeastOneMilli(Duration d) {
        return d.toMillis() < 1 ? Duration.ofMillis(1) : d;
    }

    /** {@link #send} of a script: its reply. */
    <R> R sendScript(String what, Effect effect, String script, RScript.ReturnType type, List<Object> keys,
                            Object... args) {
        return send(what, effect, batch -> batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, script,
                type, keys, args), timeout -> redis.client().getScript(onceScript(timeout)).<R>evalAsync(RScript.Mode.READ_WRITE, script,
                type, keys, args));
    }

    /** Why a try of a write was not sent ({@link #notSent}), without Redisson's advice to grow the pool. */
    private static String unsentReason(Throwable e) {
        String root = RedissonSetup.rootMessage(e);
        if (root.startsWith(RedisContext.NO_CONNECTION)) {
            return "no connection to Redis became ready";
        }
        return root.startsWith(NOT_WRITTEN) ? "the command could not be written into a connection" : root;
    }

    /**
     * True when a command sent with Redisson's retries off ({@link #once}) never reached Redis: no
     * connection was made or became ready, or Redisson failed to write it, or gave up writing it and
     * took it back. A reply that did not come in time, or a connection lost or replaced after the
     * write, leaves the outcome unknown: Redis may have run it.
     */
    static boolean notSent(Throwable e) {
        if (RedisContext.causedBy(e, RedisResponseTimeoutException.class) || RedisContext.causedBy(e, RedisReconnectedException.class)) {
            return false;
        }
        if (RedisContext.causedBy(e, RedisConnectionException.class) || RedisContext.causedBy(e, ConnectException.class)) {
            return true; // connecting failed, or the write into the connection did (WriteRedisConnectionException)
        }
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof RedisTimeoutException t) {
                String message = String.valueOf(t.getMessage());
                return message.startsWith(RedisContext.NO_CONNECTION) || message.startsWith(NOT_WRITTEN);
            }
        }
        return false;
    }
}
