package io.binomic.core.internal.worker;

import io.binomic.api.BrokerOutOfMemoryException;
import io.binomic.api.BrokerPermissionException;
import io.binomic.api.NotReplicatedException;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The one path by which a worker's outcomes reach the broker. Handlers hand their settlement to
 * {@link #submit}, which only queues it; a platform thread sends what is queued in batches of up
 * to {@value #BATCH} per {@link Broker#settle} call (one round trip on Redis).
 *
 * <p>When the broker is unreachable, nothing is dropped: the batch is kept and sent again with a
 * growing pause, and new outcomes wait in a buffer bounded at {@code capacity}; a full buffer
 * blocks the handlers that finish, so the worker stops taking work instead of losing acks. A
 * settlement the broker reports stale (the delivery was reclaimed by another consumer meanwhile)
 * is a no-op, counted in {@link #stale}. The deliveries settled last are remembered (by key), so that a
 * reclaim racing with this worker's own settlement does not run a delivery twice. A batch that keeps failing while the broker answers
 * other calls is split, and a single settlement that still fails is given up with an error: its
 * delivery stays pending and comes back by reclaim (one more run, never a loss). A batch applied
 * but not confirmed by enough replicas ({@link NotReplicatedException}), refused because the
 * server's memory is full ({@link BrokerOutOfMemoryException}), or refused to the connection's user
 * ({@link BrokerPermissionException}: an ACL rule lacks a command the settle needs), is never given
 * up: it is sent again, as during an outage, until the replicas confirm it, memory is freed or the
 * permission is granted.
 */
final class Settler {
    private static final System.Logger LOG = System.getLogger(Settler.class.getName());
    static final int BATCH = 1000;
    private static final int TRIES_BEFORE_SPLIT = 5;
    private static final Duration FIRST_PAUSE = Duration.ofMillis(50);
    private static final Duration LONGEST_PAUSE = Duration.ofSeconds(1);
    private static final Duration SLOW_CALL = Duration.ofSeconds(1);
    /** A settle call this slow means outcomes are not being written: the fetcher takes no new work until they are. */
    private static final Duration STUCK_AFTER = Duration.ofSeconds(1);
    private static final Duration PROBE_EVERY = Duration.ofSeconds(1);

    private final Broker broker;
    private final String consumer;
    private final LinkedBlockingQueue<Settlement> buffer;
    /** The delivery as this worker holds it now (a self-reclaim raises its count), by {@link Delivery#key()}. */
    private final Function<String, Delivery> current;
    /** Called once a settlement is written (or given up): the worker stops renewing its lease. */
    private final Consumer<Delivery> done;
    private final Deque<List<Settlement>> retrying = new ConcurrentLinkedDeque<>();
    /** The batch being sent now; empty between sends. */
    private volatile List<Settlement> sending = List.of();
    /** When the settle call under way began (System.nanoTime), or 0 when none is; read by the worker's health. */
    volatile long sendingSinceNanos;
    private static final int REMEMBERED = 1 << 16;
    /**
     * Deliveries whose outcome was given up (a batch Redis refuses): still pending to this consumer
     * on purpose, for reclaim to run again, or dead-letter, at their next delivery count. The
     * recovery of lost reads must not take them for entries it never received (it ran them again at
     * once, as the same attempt). Removed when reclaim takes them; rare, so bounded crudely.
     */
    private final Set<String> givenUp = ConcurrentHashMap.newKeySet();
    private static final String NOT_ANSWERED = "the broker did not answer before the stop's end";
    private final AtomicReferenceArray<String> recentlySettled = new AtomicReferenceArray<>(REMEMBERED);
    private int nextSettled;
    /** Failed tries of the batch at the head of {@link #retrying}. */
    private int headTries;
    /**
     * When the latest call that the broker answered began (System.nanoTime). A call's start, not its
     * answer: a read or a renewal sent just before Redis went down can be answered after the settle
     * call that the shutdown catches has failed, and that answer says nothing about the broker now.
     */
    private final AtomicLong answeredCallBeganNanos = new AtomicLong(System.nanoTime());
    /** When the settler saw the first failure of the writes failing now (the end of that call), or 0 while they succeed. */
    private long failureSeenNanos;
    // What the worker's counters and health read; written by the settle loop alone.
    final LongAdder stale = new LongAdder();
    final LongAdder abandoned = new LongAdder();
    volatile long lastWrittenNanos = System.nanoTime();
    /** When writes began failing (System.nanoTime), or 0 while they succeed. */
    volatile long failingSinceNanos;
    volatile String lastError = "";
    /** What grants the permission the last failed write lacked ({@link BrokerPermissionException#grant}), or null: it lacked none. */
    volatile String refusedGrant;
    /**
     * The last error of writing each queue's outcomes, kept until one of its writes succeeds: a stop that gives
     * outcomes of several queues up names each queue's ({@link #giveUpAtStop}), the batches having failed apart.
     */
    private final Map<String, String> errorByQueue = new ConcurrentHashMap<>();
    private long nextProbeNanos;
    private int probeTurn;
    /**
     * The outcomes not yet written, by kind: counted in when handed over, out when written or given up,
     * never as they move between the buffer, the batch being sent and the retries. Guarded by itself.
     */
    private final HeldOutcomes held = new HeldOutcomes();
    /** Set by {@link #giveUpAtStop}: nothing is held any more, whatever a call that lands later says. Guarded by {@link #held}. */
    private boolean holdingEnded;
    /**
     * How many outcomes were put in the buffer so far (counted once put, so a put that fails counts
     * none), how many of them the settle loop took into batches (its own), and how many of the first
     * ones put are written or given up ({@link #awaitWritten}): the buffer is first in, first out,
     * and a batch taken is sent, with its retries, before the next one is taken.
     */
    private final AtomicLong queued = new AtomicLong();
    private long taken;
    private long writtenThrough;
    private volatile String handOffQueue;
    /** Whether the broker has handed out any delivery with a settle: one that never does costs the fetcher no wait for them. */
    private volatile boolean handsOff;
    private final java.util.concurrent.ConcurrentLinkedQueue<Handed> handedOut = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private final Object writtenSignal = new Object();

    Settler(Broker broker, String consumer, int capacity, Function<String, Delivery> current,
            Consumer<Delivery> done) {
        this.broker = broker;
        this.consumer = consumer;
        this.buffer = new LinkedBlockingQueue<>(capacity);
        this.current = current;
        this.done = done;
    }

    /**
     * True while the settle call under way has taken longer than {@link #STUCK_AFTER}, or writes
     * are failing: work whose outcome is unwritten runs again elsewhere if this JVM dies, so the
     * fetcher takes no new work meanwhile.
     */
    boolean stuck() {
        long sending = sendingSinceNanos;
        return failingSinceNanos != 0 || (sending != 0 && System.nanoTime() - sending > STUCK_AFTER.toNanos());
    }

    /**
     * While outcomes fail to be written, asks the broker something cheap (one queue's stats, a
     * different queue each second): an answer tells this settler the broker is up and refuses that
     * batch (a queue's stream replaced by another type), which it then splits and gives up part by
     * part instead of holding every queue's work until the key is repaired. Nothing else would tell
     * it: the fetch is stopped meanwhile, and the leases held are those of the stuck outcomes.
     */
    void probe(List<String> queues) {
        long now = System.nanoTime();
        if (failingSinceNanos == 0 || now - nextProbeNanos < 0) {
            return;
        }
        nextProbeNanos = now + PROBE_EVERY.toNanos();
        try {
            broker.stats(queues.get(Math.floorMod(probeTurn++, queues.size())));
            brokerAnswered(now);
        } catch (RuntimeException e) {
            // that queue is the broken one, or the broker is away: another queue next time
        }
    }

    /**
     * Queues a settlement; blocks while the buffer is full (the broker has been unreachable for long).
     * Counted held before it is queued: the settle loop may write it before this call returns.
     */
    void submit(Settlement settlement) throws InterruptedException {
        hold(settlement, 1);
        try {
            buffer.put(settlement);
        } catch (InterruptedException e) {
            hold(settlement, -1);
            throw e;
        }
        queued.incrementAndGet();
    }

    /**
     * New deliveries the broker handed this worker with a settle ({@link Broker#settle(String, List, Map)}), already
     * admitted onto the slots the settle freed, and when the call that took them began (their leases began with it).
     */
    record Handed(List<Delivery> deliveries, long leasedSinceNanos) { }

    /**
     * The queue whose freed concurrency slots the settle asks the broker to fill at once ({@link Fetcher} sets it
     * while the queue's own limit binds), or null: none.
     */
    void handOff(String queue) {
        handOffQueue = queue;
    }

    /** Whether the broker has handed out deliveries with a settle yet. */
    boolean handsOff() {
        return handsOff;
    }

    /** The next deliveries handed with a settle, or null. Those of a written outcome are here before it counts as written. */
    Handed pollHanded() {
        return handedOut.poll();
    }

    /**
     * Whether the delivery of {@code key} was handed with a settle and the fetcher has not taken it yet: pending under
     * this worker and unknown to its dispatcher, but not a lost read.
     */
    boolean handedNotTaken(String key) {
        for (Handed h : handedOut) {
            for (Delivery d : h.deliveries()) {
                if (d.key().equals(key)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** A mark for {@link #awaitWritten}: the outcomes handed over so far. */
    long handedOver() {
        return queued.get();
    }

    /**
     * Waits up to {@code max} until the outcomes handed over before {@code mark} ({@link #handedOver})
     * are written or given up; false if they are not by then. An outcome handed over while another
     * call to {@link #submit} was between its put and its count may be waited for, or not: a caller
     * must only be the faster for the wait, never rely on it.
     */
    boolean awaitWritten(long mark, Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        synchronized (writtenSignal) {
            while (writtenThrough < mark) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(writtenSignal, left);
            }
        }
        return true;
    }

    /**
     * {@link #awaitWritten} for an admission under a concurrency limit, of deliveries fetched (or
     * reclaimed) onto the slots of jobs that ended before {@code mark}: until their outcomes are
     * written, their entries stay pending and their slots taken, so the broker would count those jobs
     * as running. A queue's limit equal to the worker's concurrency, which cannot bind, then looks as if
     * it could: the admission records slots, and parks jobs for a slot while the limit has room. The
     * settle call is mostly under way during the read, so the wait is short; it ends at
     * {@link #STUCK_AFTER} (writes that slow stop the fetcher anyway), or at an interrupt (a stop),
     * and then the admission counts them, as it may: the limit holds either way.
     */
    void awaitBeforeAdmission(long mark) {
        try {
            awaitWritten(mark, STUCK_AFTER);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The settle loop has no batch left unwritten: every outcome it took is written or given up. */
    private void wroteAllTaken() {
        synchronized (writtenSignal) {
            writtenThrough = Math.max(writtenThrough, taken); // past the end once given up at the stop
            writtenSignal.notifyAll();
        }
    }

    private void hold(Settlement s, int sign) {
        synchronized (held) {
            if (!holdingEnded) {
                held.add(s, sign);
            }
        }
    }

    /** Another broker call of this worker, begun at {@code callBeganNanos} (System.nanoTime), succeeded. */
    void brokerAnswered(long callBeganNanos) {
        answeredCallBeganNanos.accumulateAndGet(callBeganNanos, (a, b) -> b - a > 0 ? b : a);
    }

    /**
     * One try at sending the next batch (a failed one first, after a pause that grows with its
     * failures). Returns false when there was nothing to send within {@code wait}.
     */
    boolean sendOnce(Duration wait) throws InterruptedException {
        List<Settlement> batch = retrying.pollFirst();
        // Sent before, whole or as part of a batch since split: what it finds not pending is most
        // likely its own earlier write (a split batch's other queues were applied by its first send).
        boolean resend = batch != null;
        if (batch == null) {
            Settlement first = buffer.poll(wait.toMillis(), TimeUnit.MILLISECONDS);
            if (first == null) {
                return false;
            }
            batch = new ArrayList<>(BATCH);
            batch.add(first);
            buffer.drainTo(batch, BATCH - 1);
            headTries = 0;
            taken += batch.size();
        }
        sending = batch;
        long before = System.nanoTime();
        sendingSinceNanos = before;
        try {
            List<Settlement> sent = batch.stream().map(this::asHeldNow).toList();
            String handOff = handOffQueue;
            int ofHandOff = 0;
            if (handOff != null) {
                for (Settlement o : sent) {
                    ofHandOff += o.delivery().queue().equals(handOff) ? 1 : 0;
                }
            }
            SettleReport report = ofHandOff == 0 ? broker.settle(consumer, sent) : broker.settle(consumer, sent, Map.of(handOff, ofHandOff));
            if (!report.handed().isEmpty()) {
                // before the outcomes count as written: a fetcher woken by them finds these first
                handedOut.add(new Handed(report.handed(), before));
                handsOff = true;
            }
            headTries = 0;
            if (!errorByQueue.isEmpty()) {
                sent.forEach(o -> errorByQueue.remove(o.delivery().queue()));
            }
            // A slow call was likely retried by the client after its first try landed unanswered.
            written(sent, report, resend || System.nanoTime() - before > SLOW_CALL.toNanos());
            if (retrying.isEmpty()) {
                wroteAllTaken();
            }
        } catch (RuntimeException e) {
            headTries++;
            boolean cutOff = ControlLoop.failureLevel(e) == Level.DEBUG;
            if (!cutOff) {
                String error = String.valueOf(e.getMessage());
                refusedGrant = e instanceof BrokerPermissionException refused ? refused.grant() : null;
                lastError = error;
                batch.forEach(o -> errorByQueue.put(o.delivery().queue(), error));
            } else if (lastError.isEmpty()) {
                // a call cut off by the stop says nothing of the broker but that it had not answered yet
                lastError = NOT_ANSWERED;
            }
            if (failingSinceNanos == 0) {
                failingSinceNanos = before;
                failureSeenNanos = System.nanoTime();
                if (cutOff) {
                    // The stop's interrupt: no retry follows, and the give-up (if any) is logged by the stop itself
                    LOG.log(Level.DEBUG, "worker {0}: writing {1} outcome(s) was cut off by the stop ({2})", consumer, batch.size(),
                            e.getMessage());
                } else {
                    LOG.log(Level.WARNING, "worker {0}: could not write {1} outcome(s) ({2}); keeping them and trying again",
                            consumer, batch.size(), e.getMessage());
                }
            }
            // Too few replicas confirmed, the server's memory is full, or the ACL user lacks a command or key the
            // settle needs: not a batch Redis refuses for good but one it cannot take until memory is freed or an
            // operator grants the permission; keep sending it (applied parts are no-ops) until it does, as during
            // an outage, and never give it up: given up, its job would run again by reclaim once it is granted. A
            // call begun after these writes were seen failing was answered (a fetch, a lease renewal, the fetcher's
            // probe): a refusal, not an outage. A refusal comes back at once, so
            // "during this call" would never hold. A call begun before does not count: sent just before Redis
            // went down and answered after the settle call failed, it would make an outage a refusal, and the
            // outcomes given up would run again when the worker reclaims its own deliveries after the outage.
            boolean notYet = e instanceof NotReplicatedException || e instanceof BrokerOutOfMemoryException
                    || e instanceof BrokerPermissionException;
            boolean brokerAnswersOthers = answeredCallBeganNanos.get() - failureSeenNanos > 0 && !notYet;
            if (headTries >= TRIES_BEFORE_SPLIT && brokerAnswersOthers) {
                headTries = 0;
                giveUpOrSplit(batch, e);
            } else {
                retrying.addFirst(batch);
                sending = List.of();
                pause(headTries);
            }
        } finally {
            sending = List.of();
            sendingSinceNanos = 0;
        }
        return true;
    }

    private void giveUpOrSplit(List<Settlement> batch, RuntimeException e) {
        if (batch.size() > 1) {
            LOG.log(Level.WARNING, "worker {0}: a batch of {1} outcomes keeps failing while the broker answers ({2}); sending them one by one",
                    consumer, batch.size(), e.getMessage());
            for (int i = batch.size() - 1; i >= 0; i--) {
                retrying.addFirst(List.of(batch.get(i)));
            }
            return;
        }
        Settlement s = batch.getFirst();
        abandoned.increment();
        if (givenUp.size() >= REMEMBERED) {
            givenUp.clear();
        }
        givenUp.add(s.delivery().key());
        LOG.log(Level.ERROR, "worker " + consumer + ": giving up writing the outcome of " + s.delivery().receipt() + " of queue "
                + s.delivery().queue() + "; it stays pending: once its queue can be written again, reclaim runs it again, or"
                + " dead-letters it (MAX_ATTEMPTS, io.binomic.LeaseExpired) if that was its last attempt", e);
        hold(s, -1);
        done.accept(s.delivery());
        if (retrying.isEmpty()) {
            // nothing refused is left: writes are not failing any more, and the worker may take work again
            failingSinceNanos = 0;
            wroteAllTaken();
        }
    }

    private void written(List<Settlement> sent, SettleReport report, boolean resend) {
        long now = System.nanoTime();
        lastWrittenNanos = now;
        if (failingSinceNanos != 0) {
            LOG.log(Level.INFO, "worker {0}: writing outcomes again after {1} ms", consumer,
                    String.valueOf(TimeUnit.NANOSECONDS.toMillis(now - failingSinceNanos)));
            failingSinceNanos = 0;
        }
        // On a resend, "not pending" is most likely the first send's own success (its reply was lost).
        List<Settlement> refused = resend ? report.reclaimed() : report.notApplied();
        if (!refused.isEmpty()) {
            stale.add(refused.size());
            LOG.log(Level.WARNING, "worker {0}: {1} outcome(s) changed nothing: their deliveries had been reclaimed by another "
                    + "worker after this one stopped renewing the lease, settled already, or lost with their queue's stream (Redis "
                    + "restarted without its data) ({2})", consumer, refused.size(),
                    refused.stream().limit(5).map(r -> r.delivery().queue() + "/" + r.delivery().receipt()).toList());
        }
        for (Settlement s : sent) {
            remember(s.delivery().key());
            hold(s, -1);
            done.accept(s.delivery());
        }
    }

    /** Notes a delivery key ({@code Delivery.key()}) as settled (written, or refused): see {@link #settledRecently}. */
    private void remember(String key) {
        recentlySettled.set(nextSettled, key);
        nextSettled = (nextSettled + 1) % recentlySettled.length();
    }

    /**
     * Whether {@code key} was among the last {@value #REMEMBERED} settled. A reclaim that raced
     * with this worker's own settlement (it read the entry as pending just before the ack) must not
     * run the delivery a second time. Rare, so a scan is fine; written by the settling thread, and
     * cleared by {@link #forgetSettled}.
     */
    boolean settledRecently(String key) {
        for (int i = 0; i < recentlySettled.length(); i++) {
            if (key.equals(recentlySettled.get(i))) {
                return true;
            }
        }
        return false;
    }

    /** Whether the outcome of {@code key} was given up and reclaim has not taken it since. */
    boolean gaveUp(String key) { return !givenUp.isEmpty() && givenUp.contains(key); }

    /** Reclaim took {@code key}: its next outcome is written as any other. */
    void reclaimed(String key) {
        if (!givenUp.isEmpty()) {
            givenUp.remove(key);
        }
    }

    /**
     * {@link #settledRecently}, then forgets the key. The race it guards against (a reclaim that
     * read the entry just before this worker's settlement applied) happens once per settlement; an
     * entry reclaimed a second time has lost its settlement (a failover to a replica that never got
     * it) and must run again.
     */
    boolean forgetSettled(String key) {
        for (int i = 0; i < recentlySettled.length(); i++) {
            String remembered = recentlySettled.get(i);
            if (key.equals(remembered)) {
                recentlySettled.compareAndSet(i, remembered, null); // by identity: a newer key in this slot stays
                return true;
            }
        }
        return false;
    }

    /**
     * {@code s} for the delivery as this worker holds it now: a reclaim of its own (after a freeze past
     * the lease) raised the delivery count, and the broker fences a settlement at an older count. The
     * job record's update goes with it, or a tracked job would never get its final record.
     */
    Settlement asHeldNow(Settlement s) {
        Delivery now = current.apply(s.delivery().key());
        if (now == null || now.deliveryCount() == s.delivery().deliveryCount()) {
            return s;
        }
        return switch (s) {
            case Settlement.Ack a -> new Settlement.Ack(now, a.job());
            case Settlement.RetryLater r -> new Settlement.RetryLater(now, r.next(), r.dueAt(), r.job());
            case Settlement.DeadLetter d -> new Settlement.DeadLetter(now, d.failure(), d.job());
        };
    }

    private static void pause(int tries) throws InterruptedException {
        long millis = Math.min(LONGEST_PAUSE.toMillis(), FIRST_PAUSE.toMillis() << Math.min(tries - 1, 10));
        Thread.sleep(millis);
    }

    /**
     * A stopping worker's end of writing: every outcome not written yet (queued, retried, or in a call the settle loop
     * left unanswered) is given up and counted in {@link #abandoned}, and no longer held, so the last counters show
     * none; returns how many. Their deliveries stay pending, for reclaim to run them again. Called once the settle
     * loop ended or was left to end: an outcome in a call that lands after this is counted given up, never the reverse.
     */
    GivenUp giveUpAtStop() {
        List<Settlement> unwritten = new ArrayList<>(sending);
        for (List<Settlement> batch; (batch = retrying.pollFirst()) != null; ) {
            unwritten.addAll(batch);
        }
        buffer.drainTo(unwritten);
        // A failed batch is put back on the retries before it leaves sending: the same outcome may be in both.
        Set<Settlement> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        List<Settlement> distinct = unwritten.stream().filter(seen::add).toList();
        abandoned.add(distinct.size());
        synchronized (held) {
            holdingEnded = true;
            held.clear();
        }
        distinct.forEach(s -> done.accept(s.delivery()));
        sending = List.of();
        Map<String, Integer> byQueue = new LinkedHashMap<>();
        distinct.forEach(o -> byQueue.merge(o.delivery().queue(), 1, Integer::sum));
        List<String> each = new ArrayList<>(byQueue.size());
        String fallback = lastError.isEmpty() ? NOT_ANSWERED : lastError;
        byQueue.forEach((queue, count) -> each.add(count + " of queue " + queue + ": " + errorByQueue.getOrDefault(queue, fallback)));
        synchronized (writtenSignal) {
            writtenThrough = Long.MAX_VALUE; // nothing will be written any more: no one waits for it
            writtenSignal.notifyAll();
        }
        return new GivenUp(distinct.size(), String.join("; ", each));
    }

    /**
     * The outcomes a stop gave up: how many, and for each queue how many and its last error
     * ({@code 2 of queue mail: ...; 1 of queue audit: ...}).
     */
    record GivenUp(int count, String byQueue) { }

    /** Outcomes not yet written. */
    int pending() {
        int inRetry = retrying.stream().mapToInt(List::size).sum();
        return buffer.size() + inRetry + sending.size();
    }

    /** The outcomes not yet written, by kind, each counted once (one waiting for room in a full buffer too). */
    HeldOutcomes held() {
        synchronized (held) {
            return held.copy();
        }
    }
}
