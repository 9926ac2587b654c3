package io.binomic.redis.internal;

import io.binomic.api.BrokerException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import org.redisson.api.RScript;
import org.redisson.client.RedisException;

/**
 * A command that may be sent twice, sent again as soon as Redis answers after a freeze or on another
 * connection, not when Redisson's command timeout ends the try that was under way: a worker's settle
 * (an outcome applied already is a no-op, and the script fences a delivery reclaimed meanwhile), and
 * the reads of its search for lost reads and its reclaim (the deliveries pending under it, a queue's
 * levels), which change nothing, or nothing more when sent again.
 *
 * <p>Redisson sends a command again only when its try has had no reply for the command timeout. A
 * frozen Redis (SIGSTOP, a paused VM, a stalled network) answers nothing, and Redisson's connection
 * check closes each connection whose PING it does not answer within that timeout: a try written on
 * such a connection never gets a reply, and is sent again at its timeout, up to the command timeout
 * (5 s by default) after Redis answers again. A worker's held outcomes were written that late, and
 * a stop whose grace ended meanwhile gave them up, so that their jobs ran again. A try whose reply a
 * connection reset cut off is not failed either, but waits for the same timeout while Redis answers
 * on every other connection: a search for lost reads held that way, on the thread the reclaim shares,
 * would find lost deliveries past their lease, once the reclaim had taken them as their next attempt.
 *
 * <p>So while no try has answered for {@link #RESEND_AFTER} (plus the replicas' {@code wait.timeout}
 * when a write waits for them), a probe is sent to the node the command goes to (a script returning 1 on
 * one of its keys), one at a time, each sent once and given {@link #PROBE_WAIT}: four tiny commands a
 * second against a Redis that does not answer, never a hot loop. A probe answered while the tries are not says Redis
 * answers again: the command is sent again, at most {@link #MAX_TRIES} tries out at once, and the first
 * try to answer is the reply. A try left behind may still land, which changes nothing more.
 */
final class ResendWhenAnswered {
    static final Duration RESEND_AFTER = Duration.ofSeconds(1);
    static final Duration PROBE_WAIT = Duration.ofMillis(250);
    static final int MAX_TRIES = 3;
    private static final String PROBE = "return 1";

    private ResendWhenAnswered() { }

    /**
     * The reply of {@code write} (which sends the write once each call), sent again as the class says
     * while Redis answers {@code probeKey}'s node but not the write; a write that waits for replicas
     * is given their {@code wait.timeout} more first. A try that fails fails the call, as Redisson's
     * call would (its retries are within the try); an interrupt cancels the tries.
     */
    static <R> R send(RedisContext redis, String what, String probeKey, Supplier<CompletableFuture<R>> write) {
        return send(redis, what, probeKey, RESEND_AFTER.plus(redis.replicaWait.on() ? redis.replicaWait.timeout() : Duration.ZERO),
                write);
    }

    /** {@link #send} of a read, which no replica is waited for: its reply. */
    static <R> R sendRead(RedisContext redis, String what, String probeKey, Supplier<CompletableFuture<R>> read) {
        return send(redis, what, probeKey, RESEND_AFTER, read);
    }

    private static <R> R send(RedisContext redis, String what, String probeKey, Duration unansweredFor,
                              Supplier<CompletableFuture<R>> command) {
        long resendAfter = unansweredFor.toNanos();
        long probeWait = PROBE_WAIT.toNanos();
        List<CompletableFuture<R>> tries = new ArrayList<>(MAX_TRIES);
        tries.add(command.get());
        long lastSent = System.nanoTime();
        CompletableFuture<Object> probe = null;
        long probeSent = lastSent - probeWait;
        try {
            while (true) {
                for (CompletableFuture<R> t : tries) {
                    if (t.isDone()) {
                        tries.forEach(other -> { if (other != t) other.cancel(true); });
                        return replyOf(t);
                    }
                }
                long now = System.nanoTime();
                if (probe != null && (probe.isDone() || now - probeSent >= probeWait)) {
                    boolean answered = probe.isDone() && !probe.isCompletedExceptionally();
                    probe.cancel(true);
                    probe = null;
                    if (answered && tries.size() < MAX_TRIES) {
                        RedisContext.LOG.log(System.Logger.Level.DEBUG, "Redis at {0} answers again but not the {1} sent {2} ms ago;"
                                + " sending it again", redis.setup.target(), what,
                                String.valueOf(TimeUnit.NANOSECONDS.toMillis(now - lastSent)));
                        tries.add(command.get());
                        lastSent = now;
                        continue;
                    }
                }
                if (probe == null && now - lastSent >= resendAfter && now - probeSent >= probeWait && tries.size() < MAX_TRIES) {
                    // sent once: a probe on a connection the freeze closed fails, and the next one goes on another
                    probe = redis.client().getScript(WriteOnce.onceScript(PROBE_WAIT)).evalAsync(probeKey, RScript.Mode.READ_WRITE,
                            PROBE, RScript.ReturnType.LONG, List.of(probeKey)).toCompletableFuture();
                    probeSent = now;
                }
                long wakeAt = probe != null ? probeSent + probeWait
                        : tries.size() < MAX_TRIES ? Math.max(lastSent + resendAfter, probeSent + probeWait) : now + resendAfter;
                List<CompletableFuture<?>> any = new ArrayList<>(tries);
                if (probe != null) {
                    any.add(probe);
                }
                try {
                    CompletableFuture.anyOf(any.toArray(CompletableFuture[]::new))
                            .get(Math.max(TimeUnit.MILLISECONDS.toNanos(1), wakeAt - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (TimeoutException | ExecutionException | CancellationException e) {
                    // looked at in the next round: a try's failure is the call's, a probe's says nothing yet
                }
            }
        } catch (InterruptedException e) {
            tries.forEach(t -> t.cancel(true));
            if (probe != null) {
                probe.cancel(true);
            }
            Thread.currentThread().interrupt();
            throw new BrokerException("interrupted while waiting for Redis at " + redis.setup.target() + " to answer the " + what, e);
        }
    }

    /** A done try's reply, or its failure as Redisson's blocking call throws it (for the caller's handling). */
    private static <R> R replyOf(CompletableFuture<R> done) {
        try {
            return done.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof BrokerException own) {
                throw own;
            }
            throw e.getCause() instanceof RedisException r ? r : new RedisException("Unexpected exception while processing command",
                    e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("a done future never waits", e);
        }
    }
}
