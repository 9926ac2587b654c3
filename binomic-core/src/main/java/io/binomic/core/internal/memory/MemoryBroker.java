package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.Priority;
import io.binomic.api.QueueLimits;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.DeadLetterStore;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.PauseState;
import io.binomic.api.spi.Pausing;
import io.binomic.api.spi.PendingDeliveries;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.TickResult;
import io.binomic.api.spi.UniqueClaim;
import io.binomic.api.spi.UniqueSubmits;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The embedded broker: every queue lives in this JVM's memory, so nothing survives the process.
 * It mirrors the Redis broker's semantics (pending list with owners and delivery counts,
 * durable-looking delayed set, dead-letter store with retention) so code tested on it behaves the
 * same on Redis. One lock guards everything: simple, and far from the bottleneck in one JVM.
 *
 * <p>Its delayed set and tick claims are reached through {@link MemoryScheduler}, which shares this
 * lock: a retry is stored by {@link #settle} atomically with the ack, and moved by the scheduler.
 */
public final class MemoryBroker implements Broker, JobStore, DeadLetterStore, FlowLimits, UniqueSubmits, Pausing, Partitioning,
        Activity, PendingDeliveries {

    private final BrokerConfig config;
    private final Clock clock;
    private final System.Logger log;
    private volatile System.Logger.Level droppedOnCloseLevel = System.Logger.Level.WARNING;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition messageArrived = lock.newCondition();
    private final Map<String, QueueState> queues = new HashMap<>();
    /** Job records by queue and id; an expired record is removed when next looked at. */
    private final Map<String, Map<UUID, StoredJob>> jobs = new HashMap<>();
    private final Map<String, List<Consumer<JobEvent>>> jobListeners = new ConcurrentHashMap<>();
    /** Events published under the lock, delivered after it is released. */
    private final List<JobEvent> undelivered = new ArrayList<>();

    private static final class StoredJob {
        final Map<String, String> fields = new HashMap<>();
        Instant expiresAt;
    }
    private long nextEntry;
    private int fetchRound;
    private boolean closed;

    /** A message stored in a queue, with the id a stream would give it. */
    private record Entry(String receipt, Message message) { }

    private static final class Pending {
        final Entry entry;
        String owner;
        long lastTouchedNanos;
        int deliveryCount;

        Pending(Entry entry, String owner, long now) {
            this.entry = entry;
            this.owner = owner;
            this.lastTouchedNanos = now;
            this.deliveryCount = 1;
        }
    }

    /** The last fired tick of a periodic job, forgotten at {@code expiresAt} as a Redis key with a TTL would be. */
    private record TickClaim(long tickMillis, Instant expiresAt) { }

    private record Scheduled(long dueMillis, long sequence) implements Comparable<Scheduled> {
        @Override
        public int compareTo(Scheduled o) {
            int byDue = Long.compare(dueMillis, o.dueMillis);
            return byDue != 0 ? byDue : Long.compare(sequence, o.sequence);
        }
    }

    private static final class QueueState {
        final PriorityReady<Entry> ready;
        final LinkedHashMap<String, Pending> pending = new LinkedHashMap<>();
        final TreeMap<Scheduled, Message> delayed = new TreeMap<>();
        final TreeMap<String, DeadLetter> deadLetters = new TreeMap<>();
        final Map<String, Long> consumersLastSeenNanos = new HashMap<>();
        final Map<String, TickClaim> lastTick = new HashMap<>();
        /** Minute buckets of what the workers did, by minute. */
        final TreeMap<Instant, ActivityBucket> activity = new TreeMap<>();

        QueueState(int lowerFirstEvery) {
            ready = new PriorityReady<>(lowerFirstEvery, e -> e.message().priority());
        }
    }

    public MemoryBroker(BrokerConfig config) {
        this(config, Clock.systemUTC());
    }

    /** What a submission stored: for the test mode, which records submissions and may run them at once. */
    public interface SubmissionListener {
        /** Called after the messages were stored, outside the broker's lock; {@code due} is null for enqueued ones. */
        void stored(List<Message> messages, Instant due);
    }

    private volatile SubmissionListener submissionListener;

    /** Tells {@code listener} of every enqueue and schedule (not of retries or replays). */
    public void onSubmission(SubmissionListener listener) {
        this.submissionListener = listener;
    }

    private void notifySubmission(List<Message> messages, Instant due) {
        SubmissionListener listener = submissionListener;
        if (listener != null) {
            listener.stored(messages, due);
        }
    }

    /** Logs what {@link #close()} drops at DEBUG instead of WARNING: for owners that expect to drop it. */
    public void dropOnCloseQuietly() {
        droppedOnCloseLevel = System.Logger.Level.DEBUG;
    }

    MemoryBroker(BrokerConfig config, Clock clock) {
        this(config, clock, System.getLogger(MemoryBroker.class.getName()));
    }

    MemoryBroker(BrokerConfig config, Clock clock, System.Logger log) {
        this.config = config;
        this.clock = clock;
        this.log = log;
        this.lowerFirstEvery = Priority.fairness(config);
    }

    /** The starvation bound of priorities ({@link Priority#FAIRNESS_OPTION}). */
    private final int lowerFirstEvery;

    private QueueState queue(String name) {
        return queues.computeIfAbsent(name, n -> new QueueState(lowerFirstEvery));
    }

    /** Receipts sort like stream ids: fixed width, increasing. */
    private String newReceipt() {
        return String.format("%019d", ++nextEntry);
    }

    @Override
    public void start(List<String> names) {
        locked(() -> {
            if (closed) {
                throw new IllegalStateException("this memory broker is closed");
            }
            names.forEach(this::queue);
        });
    }

    @Override
    public void enqueue(Message message) {
        enqueueAll(List.of(message));
    }

    @Override
    public void enqueueAll(List<Message> messages) {
        locked(() -> {
            for (Message m : messages) {
                queue(m.queue()).ready.addLast(new Entry(newReceipt(), m));
                createJob(m, JobState.QUEUED, null);
            }
            messageArrived.signalAll();
        });
        notifySubmission(List.copyOf(messages), null);
    }

    void schedule(Message message, Instant dueAt) {
        locked(() -> {
            queue(message.queue()).delayed.put(new Scheduled(dueAt.toEpochMilli(), ++nextEntry), message);
            createJob(message, JobState.SCHEDULED, dueAt);
        });
        notifySubmission(List.of(message), dueAt);
    }

    @Override
    public List<Delivery> fetch(List<String> names, String consumer, int max, Duration wait) throws InterruptedException {
        if (max < 1) {
            throw new IllegalArgumentException("max must be >= 1, was " + max);
        }
        long deadline = System.nanoTime() + wait.toNanos();
        lock.lockInterruptibly();
        try {
            while (true) {
                List<Delivery> out = new ArrayList<>();
                long now = System.nanoTime();
                // Start at a different queue each call, so no queue is always served first.
                int k = names.size();
                int first = names.isEmpty() ? 0 : Math.floorMod(fetchRound++, k);
                // Each queue its share first, then the rest; the next fetch starts after the last queue
                // served, so backed-up queues take turns whatever empty queues sit between them.
                int share = k == 0 ? max : Math.max(1, (max + k - 1) / k);
                int lastServed = -1;
                for (int pass = 0; pass < 2; pass++) {
                    for (int i = 0; i < k && out.size() < max; i++) {
                        String name = names.get((first + i) % k);
                        QueueState q = queue(name);
                        if (pass == 0) {
                            q.consumersLastSeenNanos.put(consumer, now);
                            q.ready.beginFetch();
                        }
                        int limit = pass == 0 ? Math.min(max, out.size() + share) : max;
                        int before = out.size();
                        while (out.size() < limit && !q.ready.isEmpty()) {
                            Entry e = q.ready.pollFirst();
                            q.pending.put(e.receipt(), new Pending(e, consumer, now));
                            out.add(Delivery.of(name, e.receipt(), e.message(), 1));
                        }
                        if (pass == 0 && out.size() > before) {
                            lastServed = (first + i) % k;
                        }
                    }
                }
                if (lastServed >= 0) {
                    fetchRound = lastServed + 1;
                }
                long left = deadline - System.nanoTime();
                if (!out.isEmpty() || left <= 0 || closed) {
                    return out;
                }
                messageArrived.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public SettleReport settle(String consumer, List<Settlement> settlements) {
        SettleReport report = locked(() -> {
            List<Settlement> reclaimed = new ArrayList<>();
            List<Settlement> notPending = new ArrayList<>();
            for (Settlement settlement : settlements) {
                Delivery d = settlement.delivery();
                QueueState q = queue(d.queue());
                Pending p = q.pending.get(d.receipt());
                if (p == null) {
                    notPending.add(settlement);
                    continue;
                }
                if (!owns(p, consumer, d)) {
                    reclaimed.add(settlement);
                    continue;
                }
                q.pending.remove(d.receipt());
                limits.release(d.queue(), d.receipt()); // its concurrency slots, if it held any
                if (settlement.job() != null) {
                    applyJob(settlement.job());
                }
                uniqueSettled(settlement);
                switch (settlement) {
                    case Settlement.Ack ack -> { }
                    case Settlement.RetryLater retry ->
                            q.delayed.put(new Scheduled(retry.dueAt().toEpochMilli(), ++nextEntry), retry.next());
                    case Settlement.DeadLetter dead -> {
                        String task = d.message().map(Message::task).orElse(d.rawFields().getOrDefault("task", "?"));
                        String id = newReceipt();
                        q.deadLetters.put(id, new DeadLetter(id, d.queue(), task, dead.failure(), d.message(), d.rawFields()));
                        applyRetention(q);
                    }
                }
            }
            return reclaimed.isEmpty() && notPending.isEmpty() ? SettleReport.ALL_APPLIED : new SettleReport(reclaimed, notPending);
        });
        deliverJobEvents();
        return report;
    }

    /**
     * The fence: the delivery is still pending and held by {@code consumer}, at least at the count
     * it was handed out with (a consumer that reclaimed its own delivery still settles it).
     */
    private static boolean owns(Pending p, String consumer, Delivery d) {
        return p != null && p.owner.equals(consumer) && p.deliveryCount >= d.deliveryCount();
    }

    @Override
    public List<Delivery> pendingOf(String name, String consumer, int max) {
        return locked(() -> queue(name).pending.values().stream().filter(p -> p.owner.equals(consumer)).limit(max)
                .map(p -> Delivery.of(name, p.entry.receipt(), p.entry.message(), p.deliveryCount)).toList());
    }

    private void applyRetention(QueueState q) {
        while (q.deadLetters.size() > config.deadLetterMaxCount()) {
            q.deadLetters.pollFirstEntry();
        }
        Instant oldest = clock.instant().minus(config.deadLetterMaxAge());
        q.deadLetters.values().removeIf(l -> l.failure().failedAt().isBefore(oldest));
    }

    @Override
    public void renewLeases(String consumer, List<Delivery> inFlight) {
        locked(() -> {
            long now = System.nanoTime();
            for (Delivery d : inFlight) {
                Pending p = queue(d.queue()).pending.get(d.receipt());
                if (owns(p, consumer, d)) {
                    p.lastTouchedNanos = now;
                }
            }
        });
    }

    @Override
    public List<Delivery> reclaim(String name, String consumer, Duration minIdle, int max) {
        return locked(() -> {
            QueueState q = queue(name);
            long now = System.nanoTime();
            q.consumersLastSeenNanos.put(consumer, now);
            List<Delivery> out = new ArrayList<>();
            for (Pending p : q.pending.values()) {
                if (out.size() >= max) {
                    break;
                }
                if (now - p.lastTouchedNanos >= minIdle.toNanos()) {
                    p.owner = consumer;
                    p.lastTouchedNanos = now;
                    p.deliveryCount++;
                    out.add(Delivery.of(name, p.entry.receipt(), p.entry.message(), p.deliveryCount));
                }
            }
            return out;
        });
    }

    int moveDue(String name, Instant now, int max) {
        return locked(() -> {
            QueueState q = queue(name);
            int moved = 0;
            Iterator<Map.Entry<Scheduled, Message>> it = q.delayed.entrySet().iterator();
            while (moved < max && it.hasNext()) {
                Map.Entry<Scheduled, Message> e = it.next();
                if (e.getKey().dueMillis() > now.toEpochMilli()) {
                    break;
                }
                it.remove();
                Message m = e.getValue();
                q.ready.addLast(new Entry(newReceipt(), m.withAttempt(m.attempt(), now)));
                moved++;
            }
            if (moved > 0) {
                messageArrived.signalAll();
            }
            return moved;
        });
    }

    Optional<Instant> nextDue(String name) {
        return locked(() -> {
            QueueState q = queue(name);
            return q.delayed.isEmpty() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(q.delayed.firstKey().dueMillis()));
        });
    }

    /** The broker's clock, for tick claims, is the one it was built with (the system clock by default). */
    TickResult fireTick(String jobName, Instant tick, Message message, Duration claimLifetime) {
        return locked(() -> {
            Instant now = clock.instant();
            if (tick.isAfter(now)) {
                return new TickResult(TickResult.Outcome.NOT_DUE, now);
            }
            Map<String, TickClaim> ticks = queue(message.queue()).lastTick;
            TickClaim last = ticks.get(jobName);
            if (last != null && last.expiresAt().isAfter(now) && last.tickMillis() >= tick.toEpochMilli()) {
                return new TickResult(TickResult.Outcome.ALREADY_FIRED, now);
            }
            queue(message.queue()).ready.addLast(new Entry(newReceipt(), message.withAttempt(message.attempt(), now)));
            createJob(message, JobState.QUEUED, null);
            ticks.put(jobName, new TickClaim(tick.toEpochMilli(), now.plus(claimLifetime)));
            messageArrived.signalAll();
            return new TickResult(TickResult.Outcome.FIRED, now);
        });
    }

    @Override
    public List<DeadLetter> readDeadLetters(String name, Optional<String> cursor, int count) {
        return locked(() -> {
            QueueState q = queue(name);
            var view = cursor.isPresent() ? q.deadLetters.tailMap(cursor.get(), false) : q.deadLetters;
            return view.values().stream().limit(count).toList();
        });
    }

    @Override
    public Optional<DeadLetter> readDeadLetter(String name, String id) {
        requireReceipt(id);
        return locked(() -> {
            QueueState q = queues.get(name);
            return q == null ? Optional.empty() : Optional.ofNullable(q.deadLetters.get(id));
        });
    }

    @Override
    public int replayDeadLetters(String name, List<String> ids) {
        ids.forEach(MemoryBroker::requireReceipt);
        return locked(() -> {
            QueueState q = queue(name);
            Instant now = clock.instant();
            int replayed = 0;
            for (String id : ids) {
                DeadLetter letter = q.deadLetters.get(id);
                if (letter == null || letter.message().isEmpty()) {
                    continue;
                }
                q.deadLetters.remove(id);
                Message back = letter.message().get().withAttempt(1, now).withReplayedFrom(id);
                q.ready.addLast(new Entry(newReceipt(), back));
                createJob(back, JobState.QUEUED, null);
                replayed++;
            }
            if (replayed > 0) {
                messageArrived.signalAll();
            }
            return replayed;
        });
    }

    /** Ids of this broker are the digits {@link #newReceipt()} writes. */
    private static void requireReceipt(String id) {
        if (!id.matches("\\d{1,19}")) {
            throw new IllegalArgumentException("'" + id + "' is not a dead-letter id of the memory broker (digits, as 'dlq list --details' shows them)");
        }
    }

    @Override
    public int deleteDeadLetters(String name, List<String> ids) {
        return locked(() -> {
            QueueState q = queue(name);
            int deleted = 0;
            for (String id : ids) {
                if (q.deadLetters.remove(id) != null) {
                    deleted++;
                }
            }
            return deleted;
        });
    }

    @Override
    public void addActivity(Map<String, List<ActivityBucket>> byQueue) {
        locked(() -> {
            Instant oldest = ActivityBucket.minuteOf(clock.instant().minus(ActivityBucket.KEPT));
            byQueue.forEach((name, buckets) -> {
                var activity = queue(name).activity;
                for (var b : buckets) {
                    activity.merge(b.minute(), b, ActivityBucket::plus);
                }
                activity.headMap(oldest).clear();
            });
            return null;
        });
    }

    @Override
    public List<ActivityBucket> activity(String name, Instant since) {
        return locked(() -> {
            QueueState q = queues.get(name);
            return q == null ? List.of() : List.copyOf(q.activity.tailMap(ActivityBucket.minuteOf(since), true).values());
        });
    }

    /** The last tick of {@code jobName} fired on {@code name}, while its claim lasts. */
    Optional<Instant> lastFiredTick(String name, String jobName) {
        return locked(() -> {
            QueueState q = queues.get(name);
            TickClaim claim = q == null ? null : q.lastTick.get(jobName);
            return claim == null || !claim.expiresAt().isAfter(clock.instant()) ? Optional.<Instant>empty()
                    : Optional.of(Instant.ofEpochMilli(claim.tickMillis()));
        });
    }

    @Override
    public QueueStats stats(String name) {
        return locked(() -> {
            QueueState q = queue(name);
            return new QueueStats(name, q.ready.size(), q.pending.size(), q.delayed.size(), q.deadLetters.size(),
                    q.consumersLastSeenNanos.size());
        });
    }

    @Override
    public int removeIdleConsumers(String name, Duration idle) {
        return locked(() -> {
            QueueState q = queue(name);
            long now = System.nanoTime();
            int before = q.consumersLastSeenNanos.size();
            q.consumersLastSeenNanos.entrySet().removeIf(e -> now - e.getValue() >= idle.toNanos()
                    && q.pending.values().stream().noneMatch(p -> p.owner.equals(e.getKey())));
            return before - q.consumersLastSeenNanos.size();
        });
    }

    /**
     * Closes the broker. Its queues live only in this JVM, so whatever they still hold (ready,
     * pending and delayed messages; dead letters) is gone: that is logged as a warning with the
     * counts, so a lost backlog is never silent.
     */
    @Override
    public void close() {
        String dropped = locked(() -> {
            if (closed) {
                return null;
            }
            closed = true;
            messageArrived.signalAll();
            long ready = 0;
            long pending = 0;
            long delayed = 0;
            long dead = 0;
            for (QueueState q : queues.values()) {
                ready += q.ready.size();
                pending += q.pending.size();
                delayed += q.delayed.size();
                dead += q.deadLetters.size();
            }
            long messages = ready + pending + delayed;
            if (messages == 0 && dead == 0) {
                return null;
            }
            return "memory broker " + config.url() + " closed with " + messages + " message(s) dropped (" + ready + " ready, "
                    + pending + " pending, " + delayed + " delayed) and " + dead + " dead letter(s) dropped: the embedded"
                    + " broker keeps nothing after close; use a redis:// broker for messages that must survive";
        });
        if (dropped != null) {
            log.log(droppedOnCloseLevel, dropped);
        }
    }

    // ---- flow limits (rate and concurrency; see MemoryLimits) ----

    private final MemoryLimits limits = new MemoryLimits(new MemoryLimits.Store() {
        @Override
        public Object delay(String queue, Message message, long dueMillis) {
            Scheduled at = new Scheduled(dueMillis, ++nextEntry);
            queue(queue).delayed.put(at, message);
            return at;
        }

        @Override
        public boolean moveNow(String queue, Object handle) {
            QueueState q = queue(queue);
            Message m = q.delayed.remove((Scheduled) handle);
            if (m == null) {
                return false;
            }
            Message turn = m.withTurn(true);
            q.ready.addLast(new Entry(newReceipt(), turn.withAttempt(m.attempt(), clock.instant())));
            messageArrived.signalAll();
            return true;
        }
    });

    @Override
    public List<Admission> admit(String consumer, List<Admission.Request> requests) {
        List<Admission> out = locked(() -> {
            List<Admission> decisions = new ArrayList<>(requests.size());
            for (var request : requests) {
                Delivery d = request.delivery();
                QueueState q = queue(d.queue());
                if (!owns(q.pending.get(d.receipt()), consumer, d)) {
                    decisions.add(new Admission(d, Admission.Decision.NOT_PENDING, Optional.empty()));
                    continue;
                }
                var admission = limits.decide(request, clock.millis());
                if (admission.decision() != Admission.Decision.RUN) {
                    q.pending.remove(d.receipt()); // acked: it waits in the delayed set
                    Message m = d.message().orElseThrow();
                    StoredJob rec = m.isTracked() ? job(d.queue(), m.id()) : null;
                    if (rec != null && !isFinal(stateOf(rec))) {
                        rec.fields.put(JobRecords.STATE, JobState.SCHEDULED.name());
                        rec.fields.put(JobRecords.DUE, Long.toString(admission.dueAt().orElseThrow().toEpochMilli()));
                        rec.fields.put("waiting", admission.decision() == Admission.Decision.WAIT_RATE
                                ? "rate limit" : "concurrency limit");
                    }
                }
                decisions.add(admission);
            }
            return decisions;
        });
        return out;
    }

    private static boolean isFinal(JobState state) {
        return state == JobState.SUCCEEDED || state == JobState.DEAD_LETTERED || state == JobState.CANCELLED;
    }

    @Override
    public int slotsHeld(String queue, String limitId) {
        return locked(() -> limits.slotsHeld(queue, limitId));
    }

    private final Map<String, QueueLimits> queueLimits = new HashMap<>();
    private final Map<String, QueuePartitions> partitions = new HashMap<>();

    @Override
    public Map<String, QueuePartitions> partitions(List<String> names) {
        return locked(() -> {
            Map<String, QueuePartitions> out = new LinkedHashMap<>();
            for (String name : names) {
                QueuePartitions p = partitions.get(name);
                if (p != null) {
                    out.put(name, p);
                }
            }
            return out;
        });
    }

    @Override
    public void setPartitions(String queue, QueuePartitions set) {
        Objects.requireNonNull(set, "partitions must not be null");
        locked(() -> {
            if (set.equals(QueuePartitions.ONE)) {
                partitions.remove(queue);
            } else {
                partitions.put(queue, set);
            }
            set.all(queue).forEach(this::queue);
        });
    }

    @Override
    public Map<String, QueueLimits> queueLimits(List<String> names) {
        return locked(() -> {
            Map<String, QueueLimits> out = new LinkedHashMap<>();
            for (String name : names) {
                QueueLimits l = queueLimits.get(name);
                if (l != null) {
                    out.put(name, l);
                }
            }
            return out;
        });
    }

    @Override
    public void setQueueLimits(String queue, QueueLimits limits) {
        Objects.requireNonNull(limits, "limits must not be null");
        locked(() -> {
            if (limits.isEmpty()) {
                queueLimits.remove(queue);
            } else {
                queueLimits.put(queue, limits);
            }
            // what the old limits held back is decided on again under the new ones
            this.limits.queueLimitsChanged(queue, FlowLimit.QUEUE_LIMIT_ID);
            QueueState q = queue(queue);
            long now = clock.millis();
            List<Map.Entry<Scheduled, Message>> rateWaiting = q.delayed.entrySet().stream()
                    .filter(e -> e.getKey().dueMillis() > now && e.getKey().dueMillis() < PauseState.PARKED_UNTIL.toEpochMilli()
                            && e.getValue().rateAdmittedAttempt().isPresent())
                    .limit(10_000).toList();
            for (Map.Entry<Scheduled, Message> e : rateWaiting) {
                q.delayed.remove(e.getKey());
                q.delayed.put(new Scheduled(now, ++nextEntry), e.getValue());
            }
            messageArrived.signalAll();
        });
    }

    // ---- job records ----

    /** Creates (or, for a replay, resets) the record of a tracked message. Called under the lock. */
    private void createJob(Message m, JobState state, Instant due) {
        if (!m.isTracked()) {
            return;
        }
        StoredJob rec = new StoredJob();
        rec.fields.put(JobRecords.STATE, state.name());
        rec.fields.put(JobRecords.TASK, m.task());
        rec.fields.put(JobRecords.ENQUEUED_AT, Long.toString(clock.instant().toEpochMilli()));
        rec.fields.put(JobRecords.RETENTION, m.trackForMillis());
        if (due != null) {
            rec.fields.put(JobRecords.DUE, Long.toString(due.toEpochMilli()));
        }
        jobs.computeIfAbsent(m.queue(), k -> new HashMap<>()).put(m.id(), rec);
    }

    private StoredJob job(String queue, UUID id) {
        Map<UUID, StoredJob> byId = jobs.get(queue);
        if (byId == null) {
            return null;
        }
        StoredJob rec = byId.get(id);
        if (rec != null && rec.expiresAt != null && !clock.instant().isBefore(rec.expiresAt)) {
            byId.remove(id);
            return null;
        }
        return rec;
    }

    /** Applies {@code update}, creating the record if missing. Called under the lock. */
    private void applyJob(JobUpdate update) {
        StoredJob rec = job(update.queue(), update.id());
        if (rec == null) {
            rec = new StoredJob();
            jobs.computeIfAbsent(update.queue(), k -> new HashMap<>()).put(update.id(), rec);
        }
        rec.fields.putAll(update.set());
        update.delete().forEach(rec.fields::remove);
        if (!update.expireAfter().isZero()) {
            rec.expiresAt = clock.instant().plus(update.expireAfter());
        }
        if (update.ends()) {
            undelivered.add(new JobEvent(update.queue(), update.id(), JobEvent.Kind.ENDED));
        }
    }

    private static JobState stateOf(StoredJob rec) {
        try {
            return JobState.valueOf(rec.fields.getOrDefault(JobRecords.STATE, "UNKNOWN"));
        } catch (IllegalArgumentException e) {
            return JobState.UNKNOWN;
        }
    }

    @Override
    public Optional<JobRecord> readJob(String queue, UUID id) {
        return locked(() -> {
            StoredJob rec = job(queue, id);
            return rec == null ? Optional.<JobRecord>empty() : Optional.of(new JobRecord(rec.fields));
        });
    }

    @Override
    public Set<UUID> startJobs(List<JobUpdate> starts) {
        Set<UUID> result = locked(() -> {
            Set<UUID> notStarted = new HashSet<>();
            String now = Long.toString(clock.instant().toEpochMilli());
            for (JobUpdate start : starts) {
                StoredJob rec = job(start.queue(), start.id());
                if (rec != null && (stateOf(rec).isFinal())) {
                    notStarted.add(start.id());
                    continue;
                }
                if (rec != null && "1".equals(rec.fields.get(JobRecords.CANCEL_REQUESTED))) {
                    // Cancelled while an earlier attempt ran on a worker that stopped: it ends here, not run again.
                    rec.fields.put(JobRecords.STATE, JobState.CANCELLED.name());
                    rec.fields.put(JobRecords.ENDED_AT, now);
                    rec.expiresAt = clock.instant().plusMillis(Long.parseLong(rec.fields.getOrDefault(JobRecords.RETENTION, "3600000")));
                    undelivered.add(new JobEvent(start.queue(), start.id(), JobEvent.Kind.ENDED));
                    notStarted.add(start.id());
                    continue;
                }
                if (rec != null && stateOf(rec) == JobState.RUNNING) {
                    // The attempt that was running never ended: its worker stopped, and it was reclaimed.
                    String attempt = rec.fields.get("attempt");
                    if (attempt != null && !rec.fields.containsKey("a." + attempt)) {
                        rec.fields.put("a." + attempt, String.join("\t", rec.fields.getOrDefault("worker", ""),
                                rec.fields.getOrDefault("startedAt", now), now, "abandoned",
                                "its worker stopped before it ended; the job was reclaimed"));
                    }
                }
                applyJob(start);
            }
            return notStarted;
        });
        deliverJobEvents();
        return result;
    }

    @Override
    public void updateRunningJob(JobUpdate update) {
        locked(() -> {
            StoredJob rec = job(update.queue(), update.id());
            if (rec != null && stateOf(rec) == JobState.RUNNING) {
                applyJob(update);
            }
        });
        deliverJobEvents();
    }

    @Override
    public JobHandle.CancelOutcome cancelJob(JobUpdate cancelled) {
        JobHandle.CancelOutcome outcome = locked(() -> {
            StoredJob rec = job(cancelled.queue(), cancelled.id());
            if (rec == null) {
                return JobHandle.CancelOutcome.NOT_FOUND;
            }
            JobState state = stateOf(rec);
            if (state.isFinal()) {
                return JobHandle.CancelOutcome.ALREADY_ENDED;
            }
            if (state == JobState.RUNNING) {
                rec.fields.put(JobRecords.CANCEL_REQUESTED, "1");
                undelivered.add(new JobEvent(cancelled.queue(), cancelled.id(), JobEvent.Kind.CANCEL_REQUESTED));
                return JobHandle.CancelOutcome.CANCEL_REQUESTED;
            }
            applyJob(cancelled);
            rec.expiresAt = clock.instant().plusMillis(Long.parseLong(rec.fields.getOrDefault(JobRecords.RETENTION, "3600000")));
            uniqueCancelled(cancelled.id());
            return JobHandle.CancelOutcome.CANCELLED;
        });
        deliverJobEvents();
        return outcome;
    }

    @Override
    public AutoCloseable subscribeJobEvents(String queue, Consumer<JobEvent> listener) {
        List<Consumer<JobEvent>> listeners = jobListeners.computeIfAbsent(queue, k -> new CopyOnWriteArrayList<>());
        listeners.add(listener);
        return () -> listeners.remove(listener);
    }

    /** Delivers the events published under the lock, outside it (a listener may call back into the broker). */
    private void deliverJobEvents() {
        List<JobEvent> events = locked(() -> {
            if (undelivered.isEmpty()) {
                return List.<JobEvent>of();
            }
            List<JobEvent> copy = List.copyOf(undelivered);
            undelivered.clear();
            return copy;
        });
        for (JobEvent event : events) {
            for (Consumer<JobEvent> listener : jobListeners.getOrDefault(event.queue(), List.of())) {
                try {
                    listener.accept(event);
                } catch (RuntimeException e) {
                    log.log(System.Logger.Level.WARNING, "a job event listener failed: {0}", e.toString());
                }
            }
        }
    }

    /** Runs {@code action} under the broker's one lock. */
    private <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    private void locked(Runnable action) {
        locked(() -> {
            action.run();
            return null;
        });
    }

    // ---- flow control: unique jobs, debounce, pause (the same semantics as the Redis scripts) ----

    /** A held unique key: the job holding it, until when. */
    private record UniqueHold(UUID job, Instant expiresAt) { }

    /** A debounced job waiting in the delayed set: where, and its id. */
    private record DebounceSlot(Scheduled slot, UUID job) { }

    /** Held unique keys by "queue NUL task NUL key"; an expired one counts as free. */
    private final Map<String, UniqueHold> uniqueKeys = new HashMap<>();
    /** The unique key each holding job holds until it ends, to give it back on cancel. */
    private final Map<UUID, String> uniqueKeyOfJob = new HashMap<>();
    private final Map<String, DebounceSlot> debounced = new HashMap<>();
    /** Paused tasks by queue; "*" is the whole queue. */
    private final Map<String, Set<String>> paused = new HashMap<>();

    private static String flowKey(Message m, String key) {
        return m.queue() + "\0" + m.task() + "\0" + key;
    }

    @Override
    public UUID submitUnique(Message message, Instant dueAt) {
        return submitAllUnique(List.of(message), dueAt).getFirst();
    }

    @Override
    public List<UUID> submitAllUnique(List<Message> messages, Instant dueAt) {
        List<Message> stored = new ArrayList<>();
        List<UUID> ids = locked(() -> {
            List<UUID> out = new ArrayList<>(messages.size());
            Instant now = clock.instant();
            purgeExpiredUniqueKeys(now, messages.size());
            for (Message m : messages) {
                UniqueClaim claim = UniqueClaim.of(m).orElseThrow(
                        () -> new IllegalArgumentException("message " + m.id() + " has no unique claim (header '"
                                + UniqueClaim.HEADER + "')"));
                String k = flowKey(m, claim.key());
                UniqueHold hold = uniqueKeys.get(k);
                if (hold != null && hold.expiresAt().isAfter(now)) {
                    out.add(hold.job());
                    continue;
                }
                uniqueKeys.put(k, new UniqueHold(m.id(), now.plus(claim.ttl())));
                if (claim.releasedAtEnd()) {
                    uniqueKeyOfJob.put(m.id(), k);
                }
                if (dueAt == null) {
                    queue(m.queue()).ready.addLast(new Entry(newReceipt(), m));
                    createJob(m, JobState.QUEUED, null);
                } else {
                    queue(m.queue()).delayed.put(new Scheduled(dueAt.toEpochMilli(), ++nextEntry), m);
                    createJob(m, JobState.SCHEDULED, dueAt);
                }
                stored.add(m);
                out.add(m.id());
            }
            messageArrived.signalAll();
            return out;
        });
        if (!stored.isEmpty()) {
            notifySubmission(stored, dueAt);
        }
        return ids;
    }

    /** Unique submits since the last sweep of expired keys. */
    private long uniqueSubmitsSinceSweep;

    /**
     * Drops the expired keys (as Redis' key expiry does) every so many unique submits, so a long-lived
     * embedded broker holding keys for a period or of jobs that never ended does not grow without
     * bound; the sweep's cost is spread over at least as many submits as there are keys. Called under the lock.
     */
    private void purgeExpiredUniqueKeys(Instant now, int submits) {
        uniqueSubmitsSinceSweep += submits;
        if (uniqueSubmitsSinceSweep < Math.max(1024, uniqueKeys.size())) {
            return;
        }
        uniqueSubmitsSinceSweep = 0;
        var it = uniqueKeys.values().iterator();
        while (it.hasNext()) {
            UniqueHold hold = it.next();
            if (!hold.expiresAt().isAfter(now)) {
                it.remove();
                uniqueKeyOfJob.remove(hold.job());
            }
        }
    }

    /** How many unique keys this broker keeps now (held or expired and not yet swept). For tests. */
    int uniqueKeysKept() {
        return locked(uniqueKeys::size);
    }

    @Override
    public void releaseUniqueAtStart(List<Message> started) {
        locked(() -> started.forEach(m -> UniqueClaim.of(m)
                .ifPresent(c -> releaseUnique(flowKey(m, c.key()), m.id()))));
    }

    /** Gives the key back if {@code job} holds it. Called under the lock. */
    private void releaseUnique(String k, UUID job) {
        UniqueHold hold = uniqueKeys.get(k);
        if (hold != null && hold.job().equals(job)) {
            uniqueKeys.remove(k);
        }
        uniqueKeyOfJob.remove(job);
    }

    /** An ack or a dead letter ends the job: its key goes back (not for a period). Called under the lock. */
    private void uniqueSettled(Settlement settlement) {
        if (settlement instanceof Settlement.RetryLater) {
            return;
        }
        settlement.delivery().message().ifPresent(m -> UniqueClaim.of(m)
                .filter(UniqueClaim::releasedAtEnd)
                .ifPresent(c -> releaseUnique(flowKey(m, c.key()), m.id())));
    }

    /** A cancelled job gives its key back (a key held for a period is not recorded here). Called under the lock. */
    private void uniqueCancelled(UUID job) {
        String k = uniqueKeyOfJob.get(job);
        if (k != null) {
            releaseUnique(k, job);
        }
    }

    @Override
    public UUID submitDebounced(Message message, Instant dueAt) {
        String key = UniqueClaim.debounceKey(message).orElseThrow(
                () -> new IllegalArgumentException("message " + message.id() + " has no debounce key (header '"
                        + UniqueClaim.DEBOUNCE_HEADER + "')"));
        UUID id = locked(() -> {
            String k = flowKey(message, key);
            QueueState q = queue(message.queue());
            DebounceSlot prev = debounced.get(k);
            Message waiting = prev == null ? null : q.delayed.get(prev.slot());
            Scheduled slot = new Scheduled(dueAt.toEpochMilli(), ++nextEntry);
            if (waiting != null && waiting.id().equals(prev.job())) {
                q.delayed.remove(prev.slot());
                q.delayed.put(slot, message.withId(prev.job()));
                debounced.put(k, new DebounceSlot(slot, prev.job()));
                StoredJob rec = job(message.queue(), prev.job());
                if (rec != null) {
                    rec.fields.put(JobRecords.DUE, Long.toString(dueAt.toEpochMilli()));
                }
                return prev.job();
            }
            q.delayed.put(slot, message);
            createJob(message, JobState.SCHEDULED, dueAt);
            debounced.put(k, new DebounceSlot(slot, message.id()));
            return message.id();
        });
        if (id.equals(message.id())) {
            notifySubmission(List.of(message), dueAt);
        }
        return id;
    }

    @Override
    public Map<String, PauseState> pauseStates(List<String> names) {
        return locked(() -> {
            Map<String, PauseState> out = new LinkedHashMap<>();
            for (String name : names) {
                Set<String> p = paused.getOrDefault(name, Set.of());
                Set<String> tasks = new HashSet<>(p);
                tasks.remove("*");
                out.put(name, p.isEmpty() ? PauseState.NONE : new PauseState(p.contains("*"), tasks));
            }
            return out;
        });
    }

    @Override
    public void pause(String name, Optional<String> task) {
        locked(() -> {
            paused.computeIfAbsent(name, n -> new HashSet<>()).add(task.orElse("*"));
        });
    }

    @Override
    public void unpark(String name) {
        resume(name, Optional.of(""));
    }

    @Override
    public void resume(String name, Optional<String> task) {
        locked(() -> {
            Set<String> p = paused.getOrDefault(name, new HashSet<>());
            p.remove(task.orElse("*"));
            QueueState q = queue(name);
            long parked = PauseState.PARKED_UNTIL.toEpochMilli();
            List<Map.Entry<Scheduled, Message>> due = new ArrayList<>();
            for (Map.Entry<Scheduled, Message> e : q.delayed.tailMap(new Scheduled(parked, 0), true).entrySet()) {
                if (!p.contains("*") && !p.contains(e.getValue().task())) {
                    due.add(e);
                }
            }
            long now = clock.instant().toEpochMilli();
            for (Map.Entry<Scheduled, Message> e : due) {
                q.delayed.remove(e.getKey());
                q.delayed.put(new Scheduled(now, ++nextEntry), e.getValue());
            }
        });
    }

    @Override
    public String toString() {
        return "MemoryBroker[" + config.url() + "]";
    }
}
