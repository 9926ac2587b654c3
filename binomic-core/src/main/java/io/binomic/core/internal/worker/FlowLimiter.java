package io.binomic.core.internal.worker;

import io.binomic.api.QueueLimits;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskLimits;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.core.internal.Capabilities;
import io.binomic.core.internal.codec.WorkerCodec;
import java.lang.System.Logger.Level;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.IntConsumer;

/**
 * The worker's side of rate and concurrency limits: between a fetch (or a reclaim) and the
 * dispatch, it asks the broker to decide on every delivery whose task declares a limit, all of
 * one fetch in one call ({@link FlowLimits#admit}: one Lua script per queue, one round trip). A
 * delivery whose task declares none is passed through untouched, and a worker none of whose
 * tasks declares one never calls the broker at all: limits cost nothing when unused.
 *
 * <p>A delivery over a rate limit whose next start comes within {@link #maxHold} gets that start
 * reserved by the broker and waits for it here, holding its slot and its lease, rather than going
 * through the delayed set and a fetch again: that cycle let about two starts through per round trip,
 * far below a limit of hundreds per second. Longer waits still go to the delayed set, so nothing
 * is held in a worker for long, and what a worker that dies held is reclaimed after its lease.
 */
public final class FlowLimiter {
    private static final System.Logger LOG = System.getLogger(FlowLimiter.class.getName());

    private final Map<String, TaskBinding<?, ?>> handlers;
    private final Broker broker;
    private final Optional<FlowLimits> flowLimits;
    private boolean reportedNoFlowLimits;
    private final String consumer;
    private final WorkerCodec codec;
    private final boolean any;
    private static final long QUEUE_LIMITS_REFRESH_NANOS = 1_000_000_000L;
    private final List<String> queues;
    private volatile Map<String, QueueLimits> queueLimits = Map.of();
    private volatile long queueLimitsReadNanos;
    private volatile boolean queueLimitsReadFailed;
    /** Whether a read of the queue limits has answered (or failed): until then the empty map held is no answer. */
    private volatile boolean queueLimitsAnswered;
    private final Duration maxHold;

    /** The longest a worker holds a delivery for its reserved start: a second, and never past a quarter of its lease. */
    static Duration maxHold(Duration leaseTimeout) {
        Duration quarter = leaseTimeout.dividedBy(4);
        return quarter.compareTo(MAX_HOLD) < 0 ? quarter : MAX_HOLD;
    }

    private static final Duration MAX_HOLD = Duration.ofSeconds(1);

    /** Told of a start a rate limit admitted: when ({@link System#nanoTime()}), and how late it may still be taken. */
    @FunctionalInterface
    public interface RateStart {
        void admitted(Delivery d, long startNanos, long allowedLateNanos);
    }

    /**
     * How late a start under {@code limits} may still be taken: {@link Dispatcher#LATE_START_NANOS}, or half
     * the shortest interval of its rate limits when that is longer. Late by that, a start lands at most half
     * a start into the next window of its limit; given back, it costs the limit a turn no job takes.
     */
    static long lateAllowanceNanos(List<FlowLimit> limits) {
        long allowance = Dispatcher.LATE_START_NANOS;
        long shortest = Long.MAX_VALUE;
        for (FlowLimit l : limits) {
            if (l.kind() == FlowLimit.Kind.RATE) {
                shortest = Math.min(shortest, l.intervalMicros());
            }
        }
        if (shortest != Long.MAX_VALUE) {
            allowance = Math.max(allowance, shortest * 1_000 / 2);
        }
        return allowance;
    }

    public FlowLimiter(Map<String, TaskBinding<?, ?>> handlers, Broker broker, String consumer, PayloadCodec codec, List<String> queues,
                       Duration leaseTimeout) {
        this.maxHold = maxHold(leaseTimeout);
        this.handlers = Map.copyOf(handlers);
        this.broker = broker;
        this.flowLimits = broker.capability(FlowLimits.class);
        this.consumer = consumer;
        this.codec = WorkerCodec.of(codec);
        this.any = handlers.values().stream().anyMatch(b -> !b.task().limits().isEmpty());
        this.queues = List.copyOf(queues);
        this.queueLimitsReadNanos = System.nanoTime() - 2 * QUEUE_LIMITS_REFRESH_NANOS;
    }

    /**
     * Reads the queue limits again once half their refresh interval has passed: called off the
     * fetch thread, so that a fetch seldom finds them stale and waits for the read itself.
     */
    void refreshAhead() {
        readQueueLimitsOlderThan(QUEUE_LIMITS_REFRESH_NANOS / 2);
    }

    /**
     * The limits set on this worker's queues, read at most once a second (one round trip for all of
     * them, never one per fetch); the last answer is kept while the broker cannot give one.
     */
    private Map<String, QueueLimits> queueLimits() {
        return readQueueLimitsOlderThan(QUEUE_LIMITS_REFRESH_NANOS);
    }

    // Both the fetch thread and the housekeeping one may read at once: each read is whole, and either answer is fresh.
    // The read is stamped before it is made: a caller that finds the stamp fresh before any read answered reads too,
    // or the worker's first fetch, beside the housekeeper's first read, would run its jobs under no queue limit.
    private Map<String, QueueLimits> readQueueLimitsOlderThan(long ageNanos) {
        long now = System.nanoTime();
        if (now - queueLimitsReadNanos >= ageNanos || !queueLimitsAnswered) {
            queueLimitsReadNanos = now;
            try {
                Map<String, QueueLimits> read = Map.copyOf(flowLimits.map(f -> f.queueLimits(queues)).orElse(Map.of()));
                if (!read.equals(queueLimits)) {
                    LOG.log(Level.INFO, "worker {0}: queue limits now: {1}", consumer, read.isEmpty() ? "none" : read);
                }
                queueLimits = read;
                queueLimitsReadFailed = false;
                queueLimitsAnswered = true;
            } catch (RuntimeException e) {
                if (!queueLimitsReadFailed) {
                    LOG.log(ControlLoop.failureLevel(e), "worker {0}: reading the limits of its queues failed ({1}); keeping the last ones read",
                            consumer, e.getMessage());
                }
                queueLimitsReadFailed = true;
                queueLimitsAnswered = true;
            }
        }
        return queueLimits;
    }

    /**
     * Whether every job of {@code queue} this worker runs passes no limit but the queue's own concurrency limit: no task
     * of the queue declares one, and the queue has no rate limit. Only then may a settle take new jobs of the queue onto
     * the slots it frees without their admission ({@link Settler#handOff}): the broker decides the queue's limit there,
     * and would not know of the others.
     */
    boolean onlyQueueConcurrency(String queue) {
        for (TaskBinding<?, ?> b : handlers.values()) {
            if (b.task().queue().equals(queue) && !b.task().limits().isEmpty()) {
                return false;
            }
        }
        QueueLimits own = queueLimits().getOrDefault(queue, QueueLimits.NONE);
        return own.concurrency().isPresent() && own.rate().isEmpty();
    }

    /**
     * The deliveries that may run: now, or, for those {@code hold} is told of, at their reserved start
     * ({@link System#nanoTime()}); the others wait (the broker moved them) or are no longer ours.
     * {@code onTime} is told of each one a rate limit admitted to run now, and when: the start its
     * lateness is measured from, like a reserved one's. Both are told how late the start may be taken.
     */
    public List<Delivery> admit(List<Delivery> deliveries, RateStart hold, RateStart onTime) {
        return admit(deliveries, hold, onTime, () -> { }, n -> { });
    }

    /**
     * {@link #admit(List, RateStart, RateStart)}, running {@code beforeConcurrency} first when a delivery
     * is under a concurrency limit: the fetcher waits there for the outcomes of the jobs that ended
     * before its read, whose entries stay pending, and their slots taken, until those are written,
     * so that the broker does not count them as running. {@code waitedForSlot} is told how many of
     * them the broker parked for a concurrency slot while their queue's own concurrency limit
     * ({@link FlowLimit#QUEUE_LIMIT_ID}, which holds every job of the queue) was their only one (0 too):
     * one such park says the queue's limit is full.
     */
    List<Delivery> admit(List<Delivery> deliveries, RateStart hold, RateStart onTime,
            Runnable beforeConcurrency, IntConsumer waitedForSlot) {
        if (deliveries.isEmpty()) {
            return deliveries;
        }
        Map<String, QueueLimits> ofQueues = queueLimits();
        if (!any && ofQueues.isEmpty()) {
            return deliveries;
        }
        List<Delivery> out = new ArrayList<>(deliveries.size());
        List<Admission.Request> requests = new ArrayList<>();
        // Keys of those whose only concurrency limit is their queue's own: when one of them waits for a slot, the queue's
        // limit is full. A job under a task's or a key's concurrency limit too may wait for that one's slot instead.
        Set<String> underQueueSlots = new HashSet<>();
        Map<String, Long> rated = new HashMap<>(); // keys of those a rate limit decides on, with how late their starts may be
        for (Delivery d : deliveries) {
            QueueLimits queueLimit = ofQueues.getOrDefault(d.queue(), QueueLimits.NONE);
            List<FlowLimit> limits = d.message().map(m -> limitsOf(m, queueLimit)).orElse(List.of());
            if (limits.isEmpty()) {
                out.add(d);
            } else {
                requests.add(new Admission.Request(d, limits));
                List<FlowLimit> concurrency = limits.stream().filter(l -> l.kind() == FlowLimit.Kind.CONCURRENCY).toList();
                if (concurrency.size() == 1 && concurrency.getFirst().id().equals(FlowLimit.QUEUE_LIMIT_ID)) {
                    underQueueSlots.add(d.key());
                }
                if (limits.stream().anyMatch(l -> l.kind() == FlowLimit.Kind.RATE)) {
                    rated.put(d.key(), lateAllowanceNanos(limits));
                }
            }
        }
        if (requests.isEmpty()) {
            return deliveries;
        }
        if (flowLimits.isEmpty()) {
            // Left pending and not held, like a failed decision: reclaimed after a lease.
            if (!reportedNoFlowLimits) {
                reportedNoFlowLimits = true;
                LOG.log(Level.WARNING, "worker {0}: {1}", consumer, Capabilities.missing(broker, FlowLimits.class,
                        "deliveries of tasks with rate or concurrency limits cannot be admitted; they come back after a lease"));
            }
            return out;
        }
        for (Admission.Request r : requests) {
            if (r.limits().stream().anyMatch(l -> l.kind() == FlowLimit.Kind.CONCURRENCY)) {
                beforeConcurrency.run();
                break;
            }
        }
        List<Admission> decisions;
        try {
            decisions = flowLimits.get().admit(consumer, requests, maxHold);
        } catch (RuntimeException e) {
            // Left pending and not held: reclaimed after a lease, and decided on again then.
            LOG.log(ControlLoop.failureLevel(e), "worker {0}: deciding the flow limits of {1} deliveries failed ({2}); they come back after a lease",
                    consumer, requests.size(), e.getMessage());
            return out;
        }
        long decided = System.nanoTime(); // after the broker's reply: a reserved start is never taken early
        int slotWaits = 0;
        for (Admission a : decisions) {
            slotWaits += a.decision() == Admission.Decision.WAIT_SLOT && underQueueSlots.contains(a.delivery().key()) ? 1 : 0;
            if (a.decision() == Admission.Decision.RUN) {
                Long allowance = rated.get(a.delivery().key());
                if (allowance != null) {
                    onTime.admitted(a.delivery(), decided, allowance);
                }
                out.add(a.delivery());
            } else if (a.decision() == Admission.Decision.HOLD) {
                hold.admitted(a.delivery(), decided + a.hold().toNanos(),
                        rated.getOrDefault(a.delivery().key(), Dispatcher.LATE_START_NANOS));
                out.add(a.delivery());
            } else if (a.decision() == Admission.Decision.NOT_PENDING) {
                LOG.log(Level.DEBUG, "worker {0}: delivery {1} was no longer its own to run", consumer, a.delivery().receipt());
            }
        }
        waitedForSlot.accept(slotWaits);
        return out;
    }

    /**
     * The limits a message must pass: its queue's, its task's, and its key's. The broker decides the
     * queue's under the ones set when it decides ({@link FlowLimits#admit}): what this worker read of
     * them, up to a second old, tells it to ask, not at what rate.
     */
    private List<FlowLimit> limitsOf(Message m, QueueLimits queueLimit) {
        TaskBinding<?, ?> binding = handlers.get(m.task());
        // an unknown task runs no handler (it is dead-lettered): it takes no slot and no start
        if (binding == null) {
            return List.of();
        }
        List<FlowLimit> ofTask = limitsOf(binding.task(), m);
        if (queueLimit.isEmpty()) {
            return ofTask;
        }
        List<FlowLimit> all = new ArrayList<>(ofTask.size() + 2);
        queueLimit.rate().ifPresent(r -> all.add(FlowLimit.rate(FlowLimit.QUEUE_LIMIT_ID, r)));
        queueLimit.concurrency().ifPresent(c -> all.add(FlowLimit.concurrency(FlowLimit.QUEUE_LIMIT_ID, c)));
        all.addAll(ofTask);
        return all;
    }

    private List<FlowLimit> limitsOf(Task<?, ?> task, Message m) {
        TaskLimits<?> limits = task.limits();
        if (limits.isEmpty()) {
            return List.of();
        }
        List<FlowLimit> out = new ArrayList<>(2);
        String taskId = "t:" + task.name();
        limits.rate().ifPresent(r -> out.add(FlowLimit.rate(taskId, r)));
        limits.concurrency().ifPresent(c -> out.add(FlowLimit.concurrency(taskId, c)));
        if (limits.hasKey()) {
            String key = m.limitKey().orElseGet(() -> keyByDecoding(task, m));
            if (key != null) {
                // URL-encoded: a limit id is part of a Redis key name
                String keyId = "k:" + task.name() + ":" + URLEncoder.encode(key, StandardCharsets.UTF_8);
                limits.rateLimitPerKey().ifPresent(r -> out.add(FlowLimit.rate(keyId, r)));
                limits.concurrencyLimitPerKey().ifPresent(c -> out.add(FlowLimit.concurrency(keyId, c)));
            }
        }
        return out;
    }

    /**
     * A message without the key header (submitted with {@code submitJson}, which has no definition to
     * compute it with) gets its key here, by decoding its argument once. One that does not decode has
     * no key: it passes the task-wide limits only, and is dead-lettered (DECODE_ERROR) when it runs.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private String keyByDecoding(Task<?, ?> task, Message m) {
        try {
            return (String) ((TaskLimits) task.limits()).keyOf(codec.decode(m, task.argumentType())).orElse(null);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * The limit key of {@code argument}, for a task that declares one; empty otherwise. Called by
     * submit, where the argument is at hand.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static Optional<String> limitKeyOf(Task<?, ?> task, Object argument) {
        TaskLimits limits = task.limits();
        return limits.hasKey() ? Optional.of((String) limits.keyOf(argument).orElseThrow()) : Optional.empty();
    }
}
