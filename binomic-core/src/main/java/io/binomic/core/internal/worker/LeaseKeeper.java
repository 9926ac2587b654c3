package io.binomic.core.internal.worker;

import io.binomic.api.BrokerPermissionException;
import io.binomic.api.spi.Delivery;
import io.binomic.core.internal.RepeatedErrorLog;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.ToIntFunction;

/**
 * The lease loop of a worker: renews, four times per lease, the leases of every delivery it holds,
 * running or not yet settled. It is a loop of its own because renewals must go on while the
 * fetcher waits on a read and while outcomes are being written: a lapsed lease hands a delivery
 * to another worker. Each renewal also says which deliveries another worker took over meanwhile
 * (this JVM was paused, or renewals could not reach the broker for longer than the lease): those
 * are handed to {@code onLost}, which stops running them, so the two runs overlap for at most one
 * renewal period once the broker answers again.
 *
 * <p>A renewal call is waited for at most a renewal period. One caught on a stalled connection can
 * otherwise take the client's command timeout and every retry after it (Redisson's: well past a
 * lease) while a call sent afresh would land the moment the connection resumes. So a call that has
 * not answered by then is left to land and another is sent, up to {@value #MAX_CALLS} at once:
 * renewals are idempotent and fenced, so a late one changes nothing but the idle time of what this
 * worker still holds. A slow call is never taken for a lost lease: only a broker's answer says a
 * delivery was taken over, and whichever call answers first renews the leases as of when it was sent.
 */
final class LeaseKeeper implements ControlLoop.Round {
    private static final System.Logger LOG = System.getLogger(LeaseKeeper.class.getName());
    /**
     * Renewal calls out at once, at most: enough that one sent within the last few periods is on
     * the wire when a stall ends, few enough that a broker slow to answer every call (busy, not
     * stalled) gets at most this many times its usual renewals.
     */
    private static final int MAX_CALLS = 4;
    /** Pause before retrying a failed renewal: after an outage, the sooner the leases are renewed, the smaller the chance another worker takes them over. */
    private static final Duration RETRY_PAUSE = Duration.ofMillis(250);

    private final WorkerContext context;
    private final Duration period;
    private final Map<String, Delivery> held;
    private final Settler settler;
    /** Stops what it can of the deliveries a renewal reported lost; returns how many it stopped. */
    private final ToIntFunction<List<Delivery>> onLost;
    private final RepeatedErrorLog renewalFailureLog = new RepeatedErrorLog();
    /** Renewal calls sent and not yet handled here, oldest first. */
    private final Deque<Call> calls = new ArrayDeque<>();
    /** The wait before the next round: a period after a renewal landed, less while none does. */
    private Duration pause;
    /** When the last renewal that reached the broker began, or when there was nothing to renew: the leases held date from then. */
    private long renewedSinceNanos = System.nanoTime();
    /** Whether the leases held are past their term without a renewal, and that was logged. */
    private boolean overdue;
    /** Since when Redis refuses the renewals to the worker's ACL user (NOPERM), 0 while it does not; read by the health. */
    volatile long refusedSinceNanos;
    /** The grant and the error of that refusal, for the health. */
    volatile String refusedGrant = "";
    volatile String refusedError = "";

    /** One renewal call: when it was sent ({@link System#nanoTime()}), and its answer, the deliveries reported lost. */
    private record Call(long began, CompletableFuture<List<Delivery>> reply) { }

    LeaseKeeper(WorkerContext context, Map<String, Delivery> held, Settler settler, ToIntFunction<List<Delivery>> onLost) {
        this.context = context;
        this.period = context.config().leaseTimeout().dividedBy(4);
        this.pause = period;
        this.held = held;
        this.settler = settler;
        this.onLost = onLost;
    }

    @Override
    public boolean run() throws InterruptedException {
        Thread.sleep(pause);
        pause = period;
        if (held.isEmpty()) {
            handleAnswered();
            renewedSinceNanos = System.nanoTime();
            overdue = false;
            refusedSinceNanos = 0; // no lease at stake: the next renewal says whether Redis still refuses
            return true;
        }
        if (calls.size() < MAX_CALLS) {
            calls.addLast(send());
        }
        switch (awaitAnswer()) {
            case LANDED -> pause = period;
            case FAILED -> {
                // A queue whose key is broken fails every try (four a second) while the others' leases are renewed. A
                // refusal lasts until an operator grants the command: tried at the renewals' own pace, it is renewed
                // within a period of the grant.
                warnIfOverdue();
                pause = refusedSinceNanos != 0 ? period : RETRY_PAUSE;
            }
            case UNANSWERED -> {
                String error = "no answer within " + period.toMillis() + " ms (leaseTimeout / 4): the call is left to land "
                        + "and another sent, at most " + MAX_CALLS + " out at once";
                if (renewalFailureLog.shouldLog(error)) {
                    LOG.log(Level.WARNING, "worker {0}: lease renewal: {1}", context.consumerName(), error);
                }
                warnIfOverdue();
                pause = Duration.ZERO;
            }
        }
        return true;
    }

    /** What the calls that answered in a round did. */
    private enum Answer { LANDED, FAILED, UNANSWERED }

    /** Sends a renewal of what is held now, on a platform thread of its own: handlers busy on the virtual-thread carriers cannot hold it up. */
    private Call send() {
        List<Delivery> renewing = List.copyOf(held.values());
        CompletableFuture<List<Delivery>> reply = new CompletableFuture<>();
        long began = System.nanoTime();
        Thread.ofPlatform().daemon().name("binomic-renewal-" + context.consumerName()).start(() -> {
            try {
                reply.complete(context.broker().renewLeasesReportingLost(context.consumerName(), renewing));
            } catch (Throwable e) {
                reply.completeExceptionally(e);
            }
        });
        return new Call(began, reply);
    }

    /** Waits a renewal period at most for one of the calls out to land or fail, handling those that answer. */
    private Answer awaitAnswer() throws InterruptedException {
        long deadline = System.nanoTime() + period.toNanos();
        while (true) {
            Answer answer = handleAnswered();
            long left = deadline - System.nanoTime();
            if (answer != Answer.UNANSWERED || calls.isEmpty() || left <= 0) {
                return answer;
            }
            CompletableFuture<?>[] replies = calls.stream().map(Call::reply).toArray(CompletableFuture<?>[]::new);
            try {
                CompletableFuture.anyOf(replies).get(left, TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                // a failure is handled with its call; no answer yet leaves them all out
            }
        }
    }

    /**
     * Handles, oldest first, the calls that answered: a renewal that landed (late ones too: a
     * delivery reported lost is stopped only if still held at that count), or a failure, which is
     * logged unless a renewal sent after it already landed. Says whether one landed, else whether one failed.
     */
    private Answer handleAnswered() {
        Answer result = Answer.UNANSWERED;
        for (Iterator<Call> it = calls.iterator(); it.hasNext(); ) {
            Call call = it.next();
            if (!call.reply().isDone()) {
                continue;
            }
            it.remove();
            try {
                List<Delivery> lost = call.reply().join();
                renewed(call.began(), lost.isEmpty() ? 0 : onLost.applyAsInt(lost));
                result = Answer.LANDED;
            } catch (CompletionException | CancellationException e) {
                if (call.began() - renewedSinceNanos < 0) {
                    continue; // superseded: the leases date from a later renewal
                }
                Throwable cause = e.getCause() == null ? e : e.getCause();
                if (cause instanceof Error error) {
                    throw error;
                }
                String error = RepeatedErrorLog.brief(cause);
                BrokerPermissionException refused = ControlLoop.refusal(cause);
                if (refused == null) {
                    refusedSinceNanos = 0;
                } else {
                    refusedGrant = refused.grant();
                    refusedError = String.valueOf(refused.getMessage());
                    if (refusedSinceNanos == 0) {
                        refusedSinceNanos = call.began();
                    }
                }
                if (renewalFailureLog.shouldLog(error)) {
                    LOG.log(Level.WARNING, refused == null ? "worker {0}: lease renewal failed: {1}"
                            : "worker {0}: lease renewal refused, retried every {2} ms until it is granted ({1})",
                            context.consumerName(), error, String.valueOf(period.toMillis()));
                }
                if (result != Answer.LANDED) {
                    result = Answer.FAILED;
                }
            }
        }
        return result;
    }

    /**
     * Notes a renewal that reached the broker. One that came more than a lease after the last (the
     * calls failed, or one hung on a stalled connection) is logged: other workers may have reclaimed
     * what this one held meanwhile; {@code stopped} of its runs were found taken over and stopped.
     */
    private void renewed(long began, int stopped) {
        settler.brokerAnswered(began);
        refusedSinceNanos = 0;
        renewalFailureLog.reset();
        long gap = System.nanoTime() - renewedSinceNanos;
        if (began - renewedSinceNanos <= 0) {
            return; // a late answer to a call sent before the renewal the leases date from
        }
        if (overdue || gap > context.config().leaseTimeout().toNanos()) {
            LOG.log(Level.WARNING, "worker {0}: leases renewed after {1} ms without a renewal, longer than the lease ({2} ms); "
                    + "stopped {3} of its runs that another worker took over meanwhile", context.consumerName(),
                    TimeUnit.NANOSECONDS.toMillis(gap), context.config().leaseTimeout().toMillis(), stopped);
            overdue = false;
        } else if (gap > 2 * period.toNanos()) {
            // Late, within the lease: how close a fault came to a reclaim, for whoever measures one.
            LOG.log(Level.DEBUG, "worker {0}: leases renewed after {1} ms without a renewal (lease {2} ms)",
                    context.consumerName(), TimeUnit.NANOSECONDS.toMillis(gap), context.config().leaseTimeout().toMillis());
        }
        renewedSinceNanos = began;
    }

    /**
     * Says once per outage that the leases held outlived their term unrenewed: from then another
     * worker may reclaim and run what this one still runs, until a renewal reaches the broker and
     * the deliveries taken over are stopped here.
     */
    private void warnIfOverdue() {
        long since = System.nanoTime() - renewedSinceNanos;
        if (!overdue && since > context.config().leaseTimeout().toNanos() && !held.isEmpty()) {
            overdue = true;
            LOG.log(Level.WARNING, "worker {0}: the leases of its {1} deliveries were not renewed for {2} ms, longer than the lease "
                    + "({3} ms): another worker may take them over and run them too; this worker stops those it finds taken "
                    + "over once a renewal reaches the broker", context.consumerName(), held.size(),
                    TimeUnit.NANOSECONDS.toMillis(since), context.config().leaseTimeout().toMillis());
        }
    }
}
