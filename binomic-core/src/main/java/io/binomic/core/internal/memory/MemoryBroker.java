package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.JobState;
import io.binomic.api.spi.Message;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Activity;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.DeadLetterStore;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimitReadings;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.Pausing;
import io.binomic.api.spi.PendingDeliveries;
import io.binomic.api.spi.QueueNames;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.UniqueSubmits;
import io.binomic.api.spi.Workflows;
import io.binomic.core.internal.memory.MemoryState.Entry;
import io.binomic.core.internal.memory.MemoryState.Pending;
import io.binomic.core.internal.memory.MemoryState.QueueState;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The embedded broker: every queue lives in this JVM's memory, so nothing survives the process.
 * It mirrors the Redis broker's semantics (pending list with owners and delivery counts,
 * durable-looking delayed set, dead-letter store with retention) so code tested on it behaves the
 * same on Redis. One lock guards everything: simple, and far from the bottleneck in one JVM.
 *
 * <p>This class moves messages (and answers {@link PendingDeliveries}); each other capability is an
 * object of its own ({@link MemoryJobStore}, {@link MemoryDeadLetters}, {@link MemoryFlowLimits},
 * {@link MemoryUniqueSubmits}, {@link MemoryPausing}, {@link MemoryPartitioning}, {@link MemoryActivity})
 * over the same {@link MemoryState} and its one lock, so a settle that also ends a job, frees a limit slot and gives
 * a unique key back is one atomic step. Its delayed set and tick claims are reached through
 * {@link MemoryScheduler}: a retry is stored by {@link #settle} atomically with the ack, and moved by
 * the scheduler.
 */
public final class MemoryBroker implements Broker, PendingDeliveries {

    private final MemoryState state;
    private final MemoryJobStore jobs;
    private final MemoryDeadLetters deadLetters;
    private final MemoryFlowLimits limits;
    private final MemoryUniqueSubmits unique;
    private final MemoryBatches batches;
    private final MemoryWorkflows workflows;
    /** The capabilities by type, built once: the answer of {@link #capability} never changes. */
    private final Map<Class<?>, Object> capabilities;
    private volatile System.Logger.Level droppedOnCloseLevel = System.Logger.Level.WARNING;
    private int fetchRound;

    public MemoryBroker(BrokerConfig config) {
        this(config, Clock.systemUTC());
    }

    MemoryBroker(BrokerConfig config, Clock clock) {
        this(config, clock, System.getLogger(MemoryBroker.class.getName()));
    }

    MemoryBroker(BrokerConfig config, Clock clock, System.Logger log) {
        this.state = new MemoryState(config, clock, log);
        this.jobs = new MemoryJobStore(state);
        this.deadLetters = new MemoryDeadLetters(state, jobs);
        this.limits = new MemoryFlowLimits(state, jobs);
        this.unique = new MemoryUniqueSubmits(state, jobs);
        jobs.onCancelled(unique::cancelled);
        this.batches = new MemoryBatches(state, jobs);
        this.workflows = new MemoryWorkflows(state, jobs);
        Map<Class<?>, Object> offered = new HashMap<>(Map.of(JobStore.class, jobs, DeadLetterStore.class, deadLetters, FlowLimits.class,
                limits, FlowLimitReadings.class, limits, UniqueSubmits.class, unique, Pausing.class, new MemoryPausing(state),
                Partitioning.class, new MemoryPartitioning(state), Activity.class, new MemoryActivity(state), Batches.class, batches,
                Workflows.class, workflows));
        offered.put(QueueNames.class, (QueueNames) this::queueNames);
        this.capabilities = Map.copyOf(offered);
    }

    /** What a submission stored: for the test mode, which records submissions and may run them at once. */
    public interface SubmissionListener {
        /** Called after the messages were stored, outside the broker's lock; {@code due} is null for enqueued ones. */
        void stored(List<Message> messages, Instant due);
    }

    /** Tells {@code listener} of every enqueue and schedule (not of retries or replays). */
    public void onSubmission(SubmissionListener listener) { state.onSubmission(listener); }

    /** Logs what {@link #close()} drops at DEBUG instead of WARNING: for owners that expect to drop it. */
    public void dropOnCloseQuietly() { droppedOnCloseLevel = System.Logger.Level.DEBUG; }

    MemoryState state() { return state; }

    MemoryJobStore jobs() { return jobs; }

    /** How many unique keys this broker keeps now (held or expired and not yet swept). For tests. */
    int uniqueKeysKept() { return unique.uniqueKeysKept(); }

    /**
     * The capability of {@code type}; for a type of its own ({@link PendingDeliveries}, {@link MemoryBroker}, which its
     * scheduler serves), this broker.
     */
    @Override
    public <T> Optional<T> capability(Class<T> type) {
        Object found = capabilities.get(type);
        return Optional.ofNullable(found != null ? found : type.isInstance(this) ? this : null).map(type::cast);
    }

    @Override
    public void start(List<String> names) {
        state.locked(() -> {
            if (state.closed) {
                throw new IllegalStateException("this memory broker is closed");
            }
            names.forEach(state::queue);
        });
    }

    @Override
    public void enqueue(Message message) { enqueueAll(List.of(message)); }

    @Override
    public void enqueueAll(List<Message> messages) {
        state.locked(() -> {
            for (Message m : messages) {
                state.addReady(m.queue(), m);
                jobs.createJob(m, JobState.QUEUED, null);
            }
        });
        state.notifySubmission(List.copyOf(messages), null);
    }

    @Override
    public List<Delivery> fetch(List<String> names, String consumer, int max, Duration wait) throws InterruptedException {
        if (max < 1) {
            throw new IllegalArgumentException("max must be >= 1, was " + max);
        }
        long deadline = System.nanoTime() + wait.toNanos();
        state.lock.lockInterruptibly();
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
                        QueueState q = state.queue(name);
                        if (pass == 0) {
                            q.consumersLastSeenNanos.put(consumer, now);
                            q.read = true;
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
                if (!out.isEmpty() || left <= 0 || state.closed) {
                    return out;
                }
                state.messageArrived.awaitNanos(left);
            }
        } finally {
            state.lock.unlock();
        }
    }

    /** What {@code consumer} holds, read without counting a delivery. */
    @Override
    public List<Delivery> pendingOf(String name, String consumer, int max) {
        return state.locked(() -> state.queue(name).pending.values().stream().filter(p -> p.owner.equals(consumer)).limit(max)
                .map(p -> p.delivery(name)).toList());
    }

    @Override
    public SettleReport settle(String consumer, List<Settlement> settlements) {
        List<Message> callbacks = new ArrayList<>(0);
        SettleReport report = state.locked(() -> {
            List<Settlement> reclaimed = new ArrayList<>();
            List<Settlement> notPending = new ArrayList<>();
            for (Settlement settlement : settlements) {
                Delivery d = settlement.delivery();
                QueueState q = state.queue(d.queue());
                Pending p = q.pending.get(d.receipt());
                if (p == null) {
                    notPending.add(settlement);
                    continue;
                }
                if (!MemoryState.owns(p, consumer, d)) {
                    reclaimed.add(settlement);
                    continue;
                }
                q.pending.remove(d.receipt());
                limits.release(d.queue(), d.receipt()); // its concurrency slots, if it held any
                if (settlement.job() != null) {
                    jobs.applyJob(settlement.job());
                }
                unique.settled(settlement);
                Message m = d.message().orElse(null);
                if (m != null && m.batch() != null) {
                    batches.settled(settlement, m, callbacks);
                }
                if (m != null && m.workflow() != null) {
                    workflows.settled(settlement, m, callbacks);
                }
                switch (settlement) {
                    case Settlement.Ack ack -> { }
                    case Settlement.RetryLater retry -> state.delay(d.queue(), retry.next(), retry.dueAt().toEpochMilli());
                    case Settlement.DeadLetter dead -> deadLetters.add(d, dead.failure());
                }
            }
            return reclaimed.isEmpty() && notPending.isEmpty() ? SettleReport.ALL_APPLIED : new SettleReport(reclaimed, notPending);
        });
        jobs.deliverJobEvents();
        batches.notify(callbacks);
        workflows.announceDelayed();
        return report;
    }

    @Override
    public List<Delivery> renewLeasesReportingLost(String consumer, List<Delivery> inFlight) {
        return state.locked(() -> {
            long now = System.nanoTime();
            List<Delivery> lost = new ArrayList<>();
            for (Delivery d : inFlight) {
                Pending p = state.queue(d.queue()).pending.get(d.receipt());
                if (MemoryState.owns(p, consumer, d)) {
                    p.lastTouchedNanos = now;
                } else {
                    lost.add(d);
                }
            }
            return lost;
        });
    }

    @Override
    public List<Delivery> reclaim(String name, String consumer, Duration minIdle, int max) {
        return state.locked(() -> {
            QueueState q = state.queue(name);
            long now = System.nanoTime();
            q.consumersLastSeenNanos.put(consumer, now);
            q.read = true;
            List<Delivery> out = new ArrayList<>();
            for (Pending p : q.pending.values()) {
                if (out.size() >= max) {
                    break;
                }
                if (now - p.lastTouchedNanos >= minIdle.toNanos()) {
                    p.owner = consumer;
                    p.lastTouchedNanos = now;
                    p.deliveryCount++;
                    out.add(p.delivery(name));
                }
            }
            return out;
        });
    }

    @Override
    public QueueStats stats(String name) {
        return state.locked(() -> {
            QueueState q = state.queue(name);
            return new QueueStats(name, q.ready.size(), q.pending.size(), q.delayed.size(), q.deadLetters.size(),
                    q.consumersLastSeenNanos.size());
        });
    }

    @Override
    public int removeIdleConsumers(String name, String consumer, Duration idle) {
        return state.locked(() -> {
            QueueState q = state.queue(name);
            long now = System.nanoTime();
            q.consumersLastSeenNanos.put(consumer, now);
            q.read = true;
            int before = q.consumersLastSeenNanos.size();
            q.consumersLastSeenNanos.entrySet().removeIf(e -> now - e.getValue() >= idle.toNanos()
                    && q.pending.values().stream().noneMatch(p -> p.owner.equals(e.getKey())));
            return before - q.consumersLastSeenNanos.size();
        });
    }

    @Override
    public boolean removeConsumer(String name, String consumer) {
        return state.locked(() -> {
            QueueState q = state.queues.get(name);
            if (q == null || q.pending.values().stream().anyMatch(p -> p.owner.equals(consumer))) {
                return false;
            }
            return q.consumersLastSeenNanos.remove(consumer) != null;
        });
    }

    /**
     * The queues that hold a message or a dead letter, or that a consumer read: what a Redis stream would be left of. Not
     * every queue with a state: asking a queue's figures makes one.
     */
    private List<String> queueNames(int max) {
        return state.locked(() -> state.queues.entrySet().stream().filter(e -> {
            QueueState q = e.getValue();
            return q.read || !q.ready.isEmpty() || !q.pending.isEmpty() || !q.delayed.isEmpty() || !q.deadLetters.isEmpty();
        }).map(e -> QueuePartitions.logical(e.getKey())).distinct().sorted().limit(max).toList());
    }

    @Override
    public boolean hasBeenRead(String name) {
        return state.locked(() -> {
            QueueState q = state.queues.get(name);
            return q != null && q.read;
        });
    }

    /**
     * Closes the broker. Its queues live only in this JVM, so whatever they still hold (ready,
     * pending and delayed messages; dead letters) is gone: that is logged as a warning with the
     * counts, so a lost backlog is never silent.
     */
    @Override
    public void close() {
        String dropped = state.locked(() -> {
            if (state.closed) {
                return null;
            }
            state.closed = true;
            state.messageArrived.signalAll();
            long ready = state.queues.values().stream().mapToLong(q -> q.ready.size()).sum();
            long pending = state.queues.values().stream().mapToLong(q -> q.pending.size()).sum();
            long delayed = state.queues.values().stream().mapToLong(q -> q.delayed.size()).sum();
            long dead = state.queues.values().stream().mapToLong(q -> q.deadLetters.size()).sum();
            long messages = ready + pending + delayed;
            if (messages == 0 && dead == 0) {
                return null;
            }
            return "memory broker " + state.config.url() + " closed with " + messages + " message(s) dropped (" + ready + " ready, "
                    + pending + " pending, " + delayed + " delayed) and " + dead + " dead letter(s) dropped: the embedded"
                    + " broker keeps nothing after close; use a redis:// broker for messages that must survive";
        });
        if (dropped != null) {
            state.log.log(droppedOnCloseLevel, dropped);
        }
    }

    @Override
    public String toString() { return "MemoryBroker[" + state.config.url() + "]"; }
}
