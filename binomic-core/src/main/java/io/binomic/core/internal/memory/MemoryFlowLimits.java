package io.binomic.core.internal.memory;

import io.binomic.api.JobState;
import io.binomic.api.Priority;
import io.binomic.api.QueueLimits;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.FlowLimitReadings;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PauseState;
import io.binomic.core.internal.memory.MemoryJobStore.StoredJob;
import io.binomic.core.internal.memory.MemoryState.QueueState;
import io.binomic.core.internal.memory.MemoryState.Scheduled;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * Rate and concurrency limits of the memory broker, under its lock, with the same semantics as the
 * Redis broker's {@code ADMIT} script (module-info-docs/flow-control.md): per queue, the GCRA time
 * of each rate limit, the deliveries holding each concurrency limit's slots, and the messages
 * waiting for a slot, oldest first. A delivery held back is acked and waits in the delayed set,
 * atomically with the decision.
 */
final class MemoryFlowLimits implements FlowLimits, FlowLimitReadings {
    /** The latest a message waiting for a slot is looked at again if no release moves it first. */
    static final long SLOT_WAIT_FALLBACK_MILLIS = 10_000;
    /** The most fallbacks a waiter far back in a line waits (a minute): see {@link #slotWaitMillis}. */
    private static final long MAX_SLOT_WAIT_FALLBACKS = 6;

    /**
     * One rate limit, in epoch µs: the GCRA time of the admitted starts (held ones at their reserved
     * start), the next turn to hand out, when a message that waited its turn was last admitted (or, while
     * the first of a line is away, when it comes back), and
     * the interval the first two were spaced with.
     */
    private static final class RateState {
        long tat;
        long nextTurn;
        long lastWaitedStart;
        long interval;

        RateState(long now, long interval) {
            this.tat = now;
            this.interval = interval;
        }

        /**
         * Respaces what lies ahead of {@code now} at {@code newInterval} when the limit's interval
         * changed (a task's limit changed in code): the starts reserved and the turns handed out
         * count the same, so the next ones come at the new rate, not after the old schedule ran out.
         */
        RateState spacedAt(long newInterval, long now) {
            if (newInterval != interval && interval > 0) {
                tat = tat > now ? now + respaced(tat - now, newInterval) : tat;
                nextTurn = nextTurn > now ? now + respaced(nextTurn - now, newInterval) : nextTurn;
                interval = newInterval;
            }
            return this;
        }

        /** In doubles, as the Redis script computes it (and a long product of two long spans could overflow). */
        private long respaced(long ahead, long newInterval) {
            return (long) Math.ceil((double) ahead * newInterval / interval);
        }
    }

    private static final class Limits {
        final Map<String, RateState> rates = new HashMap<>();
        final Map<String, Set<String>> slots = new HashMap<>();
        /** Receipt to the concurrency limits it holds slots of (empty: admitted by rate limits only). */
        final Map<String, List<String>> held = new HashMap<>();
        /** The messages waiting for a slot of each limit, as their slots in the delayed set. */
        final Map<String, ArrayDeque<Scheduled>> waiting = new HashMap<>();
        /** The priority of each waiter: a line is ordered by priority, then by arrival. */
        final Map<Scheduled, Integer> waiterPriority = new HashMap<>();
        /** The waiters whose turn came but who found the slot taken: ahead of the others of their priority. */
        final Set<Scheduled> turnTaken = new HashSet<>();

        Scheduled pollWaiter(ArrayDeque<Scheduled> line) {
            Scheduled waiter = line.pollFirst();
            waiterPriority.remove(waiter);
            turnTaken.remove(waiter);
            return waiter;
        }

        /**
         * Behind the waiters of a higher priority, ahead of the lower ones; within its priority behind
         * the others, or, when its turn came and it found the slot taken, behind only those of that kind.
         */
        void addWaiter(ArrayDeque<Scheduled> line, Scheduled waiter, int priority, boolean turnCame) {
            ArrayDeque<Scheduled> behind = new ArrayDeque<>();
            while (!line.isEmpty() && !goesBefore(line.peekLast(), priority, turnCame)) {
                behind.addFirst(line.pollLast());
            }
            line.addLast(waiter);
            line.addAll(behind);
            waiterPriority.put(waiter, priority);
            if (turnCame) {
                turnTaken.add(waiter);
            }
        }

        private boolean goesBefore(Scheduled other, int priority, boolean turnCame) {
            int p = waiterPriority.getOrDefault(other, Priority.DEFAULT);
            return p > priority || (p == priority && (!turnCame || turnTaken.contains(other)));
        }
    }

    private final MemoryState state;
    private final MemoryJobStore jobs;
    private final Map<String, QueueLimits> queueLimits = new HashMap<>();
    private final Map<String, Limits> limitsByQueue = new HashMap<>();

    MemoryFlowLimits(MemoryState state, MemoryJobStore jobs) {
        this.state = state;
        this.jobs = jobs;
    }

    private Limits limits(String queue) { return limitsByQueue.computeIfAbsent(queue, n -> new Limits()); }

    /** Moves the waiting message {@code waiter} to its queue now, its turn come ({@link FlowLimit#TURN_HEADER}); false if it is gone. */
    private boolean moveNow(String queue, Scheduled waiter) {
        Message m = state.queue(queue).delayed.remove(waiter);
        if (m == null) {
            return false;
        }
        state.addReady(queue, m.withTurn(true).withAttempt(m.attempt(), state.clock.instant()));
        return true;
    }

    @Override
    public List<Admission> admit(String consumer, List<Admission.Request> requests) {
        return admit(consumer, requests, Duration.ZERO);
    }

    @Override
    public List<Admission> admit(String consumer, List<Admission.Request> requests, Duration maxHold) {
        long holdMicros = Math.max(0, maxHold.toNanos() / 1000);
        return state.locked(() -> {
            long now = micros(state.clock.instant()); // one time for the whole call, as one script on Redis
            List<Admission> decisions = new ArrayList<>(requests.size());
            Map<String, Map<String, Integer>> seenPermits = new HashMap<>();
            for (var request : requests) {
                Delivery d = request.delivery();
                QueueState q = state.queue(d.queue());
                if (!MemoryState.owns(q.pending.get(d.receipt()), consumer, d)) {
                    decisions.add(new Admission(d, Admission.Decision.NOT_PENDING, Optional.empty()));
                    continue;
                }
                var admission = decide(request, now, holdMicros, seenPermits.computeIfAbsent(d.queue(), k -> new HashMap<>()));
                if (admission.decision() != Admission.Decision.RUN && admission.decision() != Admission.Decision.HOLD) {
                    q.pending.remove(d.receipt()); // acked: it waits in the delayed set
                    Message m = d.message().orElseThrow();
                    StoredJob rec = m.isTracked() ? jobs.job(d.queue(), m.id()) : null;
                    if (rec != null && !MemoryJobStore.stateOf(rec).isFinal()) {
                        rec.fields.put(JobRecords.STATE, JobState.SCHEDULED.name());
                        rec.fields.put(JobRecords.DUE, Long.toString(admission.dueAt().orElseThrow().toEpochMilli()));
                        rec.fields.put("waiting", admission.decision() == Admission.Decision.WAIT_RATE
                                ? "rate limit" : "concurrency limit");
                    }
                }
                decisions.add(admission);
            }
            // Slots still free after this call while messages wait for one (a limit raised): as many of
            // the line's head go back now, not at their fallback.
            seenPermits.forEach((queue, byLimit) -> byLimit.forEach((id, permits) -> {
                Limits q = limits(queue);
                moveBack(queue, q, id, permits - q.slots.getOrDefault(id, Set.of()).size());
            }));
            return decisions;
        });
    }

    /**
     * How long a waiter with {@code ahead} others in front of it stays in the delayed set unless a
     * release moves it back first. The fallback is a safety net for a line no release serves (a limit
     * removed from a task's code, a worker without the limit running a waiter a release moved back);
     * each round of releases serves about one limit's worth of the line, so a waiter further back gets
     * as many fallbacks, up to a minute: a long backlog does not come back every 10 s only to wait
     * again, the head of the line, which restarts a stuck one, keeps the short one, and no waiter of a
     * limit that is gone waits more than a minute.
     */
    static long slotWaitMillis(int ahead, int permits) {
        return SLOT_WAIT_FALLBACK_MILLIS * Math.min(1 + ahead / Math.max(1, permits), MAX_SLOT_WAIT_FALLBACKS);
    }

    private static long micros(Instant t) {
        return t.getEpochSecond() * 1_000_000 + t.getNano() / 1000;
    }

    private static Instant ofMicros(long micros) {
        return Instant.EPOCH.plus(micros, ChronoUnit.MICROS);
    }

    /** Milliseconds, rounded up: a message is never due before its time. */
    private static long millisUp(long micros) {
        return Math.floorDiv(micros + 999, 1000);
    }

    /**
     * Decides on one delivery pending under its consumer at {@code now} (epoch µs), reserving starts
     * up to {@code maxHold} µs ahead; one that waits is stored in the delayed set. Records the permits of
     * each concurrency limit it looks at in {@code seenPermits}. Called under the lock.
     */
    private Admission decide(Admission.Request request, long now, long maxHold, Map<String, Integer> seenPermits) {
        var d = request.delivery();
        Message m = d.message().orElseThrow();
        Limits q = limits(d.queue());
        List<FlowLimit> limits = withStoredQueueLimits(d.queue(), request.limits());
        if (q.held.containsKey(d.receipt())) {
            return new Admission(d, Admission.Decision.RUN, Optional.empty());
        }
        boolean turn = m.isTurn();
        Message waiting = turn ? m.withTurn(false) : m;
        List<String> concurrency = new ArrayList<>();
        for (FlowLimit limit : limits) {
            if (limit.kind() != FlowLimit.Kind.CONCURRENCY) {
                continue;
            }
            seenPermits.put(limit.id(), limit.permits());
            // A free slot goes to the delivery that finds it, even while messages wait in the line: the
            // one a release moved back is at the end of the queue, and keeping the slot for it would leave
            // the slot idle while the backlog ahead of it is fetched. It finds the slot taken and waits
            // again, ahead of the waiters parked after it.
            if (q.slots.getOrDefault(limit.id(), Set.of()).size() >= limit.permits()) {
                ArrayDeque<Scheduled> line = q.waiting.computeIfAbsent(limit.id(), k -> new ArrayDeque<>());
                long due = millisUp(now) + slotWaitMillis(turn ? 0 : line.size(), limit.permits());
                Scheduled waiter = state.delay(d.queue(), waiting, due);
                q.addWaiter(line, waiter, m.priority(), turn);
                return new Admission(d, Admission.Decision.WAIT_SLOT, Optional.of(Instant.ofEpochMilli(due)));
            }
            concurrency.add(limit.id());
        }
        // Rate limits: GCRA on the admitted starts (strict), and the waiting line. A message that waited its
        // turn starts when a start is allowed; a new one also needs the line to be empty, or stuck (no waiting
        // message admitted for two intervals), so it never takes the turn of one that is coming. A start the
        // limit allows within maxHold is reserved (the limit's time moves past it) and held by the caller.
        boolean waited = m.isRateAdmitted();
        long conform = now;
        long line = now;
        boolean canJump = true;
        boolean anyRate = false;
        for (FlowLimit limit : limits) {
            if (limit.kind() == FlowLimit.Kind.RATE) {
                anyRate = true;
                RateState st = q.rates.computeIfAbsent(limit.id(), k -> new RateState(now, limit.intervalMicros()))
                        .spacedAt(limit.intervalMicros(), now);
                // tolerance: the burst, plus one interval of jitter (a start a little late must not cost the next one its turn)
                conform = Math.max(conform, st.tat - limit.burst() * limit.intervalMicros());
                line = Math.max(line, st.nextTurn);
                if (st.nextTurn > now && now - st.lastWaitedStart <= Math.max(2 * limit.intervalMicros(), 250_000)) {
                    canJump = false;
                }
            }
        }
        long start = now;
        if (anyRate) {
            boolean eligible = waited || canJump;
            Admission.Decision decision = eligible && conform <= now ? Admission.Decision.RUN
                    : eligible && conform - now <= maxHold ? Admission.Decision.HOLD : Admission.Decision.WAIT_RATE;
            // one whose turn came but found the starts up to it taken (by a start given back and admitted
            // again, by a new one that jumped a stuck line) waits for the next start, not behind the line
            long due = decision != Admission.Decision.WAIT_RATE ? Math.max(conform, now) : waited ? conform : Math.max(conform, line);
            for (FlowLimit limit : limits) {
                if (limit.kind() == FlowLimit.Kind.RATE) {
                    RateState st = q.rates.get(limit.id());
                    if (decision != Admission.Decision.WAIT_RATE) {
                        st.tat = Math.max(st.tat, due) + limit.intervalMicros();
                        if (waited) {
                            st.lastWaitedStart = Math.max(st.lastWaitedStart, now);
                        }
                    } else if (!waited) {
                        if (st.nextTurn <= now) {
                            // the first to wait in an empty line comes back before its turn: the line is not stuck before
                            st.lastWaitedStart = Math.max(st.lastWaitedStart, due - maxHold / 2);
                        }
                        st.nextTurn = due + limit.intervalMicros();
                    }
                }
            }
            if (decision == Admission.Decision.WAIT_RATE) {
                // back a little before its turn when the caller holds: it is then held, not late
                state.delay(d.queue(), waiting.withRateAdmitted(), millisUp(Math.max(now, due - maxHold / 2)));
                return new Admission(d, Admission.Decision.WAIT_RATE, Optional.of(Instant.ofEpochMilli(millisUp(due))));
            }
            start = due;
        }
        for (String id : concurrency) {
            q.slots.computeIfAbsent(id, k -> new LinkedHashSet<>()).add(d.receipt());
        }
        q.held.put(d.receipt(), List.copyOf(concurrency));
        if (start > now) {
            return new Admission(d, Admission.Decision.HOLD, Optional.of(ofMicros(start)), Duration.of(start - now, ChronoUnit.MICROS));
        }
        return new Admission(d, Admission.Decision.RUN, Optional.empty());
    }

    /**
     * {@code requested} with the queue's own limits ({@link FlowLimit#QUEUE_LIMIT_ID}) as set now, in
     * place of any the caller passed: a caller's view of them may be a second old, and a change
     * decides on the next delivery. Called under the lock.
     */
    private List<FlowLimit> withStoredQueueLimits(String queue, List<FlowLimit> requested) {
        QueueLimits own = queueLimits.getOrDefault(queue, QueueLimits.NONE);
        List<FlowLimit> out = new ArrayList<>(requested.size() + 2);
        own.rate().ifPresent(r -> out.add(FlowLimit.rate(FlowLimit.QUEUE_LIMIT_ID, r)));
        own.concurrency().ifPresent(c -> out.add(FlowLimit.concurrency(FlowLimit.QUEUE_LIMIT_ID, c)));
        for (FlowLimit limit : requested) {
            if (!limit.id().equals(FlowLimit.QUEUE_LIMIT_ID)) {
                out.add(limit);
            }
        }
        return out;
    }

    /**
     * Releases the concurrency slots the settled delivery {@code receipt} held, if any; each slot
     * freed moves the oldest waiter back. Called under the lock.
     */
    void release(String queue, String receipt) {
        Limits q = limitsByQueue.get(queue);
        List<String> ids = q == null ? null : q.held.remove(receipt);
        if (ids == null) {
            return;
        }
        for (String id : ids) {
            Set<String> holders = q.slots.get(id);
            if (holders != null && holders.remove(receipt) && holders.isEmpty()) {
                q.slots.remove(id);
            }
            moveBack(queue, q, id, 1);
        }
    }

    /** Moves up to {@code count} live waiters of limit {@code id} back to their queue, dropping stale ones. Called under the lock. */
    private void moveBack(String queue, Limits q, String id, int count) {
        ArrayDeque<Scheduled> line = q.waiting.get(id);
        int moved = 0;
        while (line != null && !line.isEmpty() && moved < count) {
            if (moveNow(queue, q.pollWaiter(line))) {
                moved++;
            }
        }
        if (line != null && line.isEmpty()) {
            q.waiting.remove(id);
        }
    }

    @Override
    public int slotsHeld(String queue, String limitId) {
        return state.locked(() -> {
            Limits q = limitsByQueue.get(queue);
            return q == null ? 0 : q.slots.getOrDefault(limitId, Set.of()).size();
        });
    }

    @Override
    public Map<String, Reading> read(String queue, List<String> limitIds) {
        return state.locked(() -> {
            long now = micros(state.clock.instant());
            Limits q = limitsByQueue.get(queue);
            Map<String, Reading> out = new LinkedHashMap<>();
            if (q == null) {
                limitIds.forEach(id -> out.put(id, Reading.IDLE));
                return out;
            }
            for (String id : limitIds) {
                // the line's length, as Redis counts it: a waiter cancelled meanwhile is dropped only when its turn comes
                ArrayDeque<Scheduled> line = q.waiting.get(id);
                RateState rate = q.rates.get(id);
                out.put(id, new Reading(q.slots.getOrDefault(id, Set.of()).size(), line == null ? 0 : line.size(),
                        rate == null ? 0 : Reading.turnsAhead(rate.tat, rate.nextTurn, rate.interval, now)));
            }
            return out;
        });
    }


    @Override
    public Map<String, QueueLimits> queueLimits(List<String> names) {
        return state.locked(() -> MemoryState.present(queueLimits, names));
    }

    @Override
    public void setQueueLimits(String queue, QueueLimits set) {
        Objects.requireNonNull(set, "limits must not be null");
        state.locked(() -> {
            MemoryState.setOrClear(queueLimits, queue, set, set.isEmpty());
            // what the old limits held back is decided on again under the new ones: their waiters go
            // back to the queue, their rate state starts afresh
            Limits limits = limitsByQueue.get(queue);
            if (limits != null) {
                limits.rates.remove(FlowLimit.QUEUE_LIMIT_ID);
                ArrayDeque<Scheduled> line = limits.waiting.remove(FlowLimit.QUEUE_LIMIT_ID);
                while (line != null && !line.isEmpty()) {
                    moveNow(queue, limits.pollWaiter(line));
                }
            }
            QueueState q = state.queue(queue);
            long now = state.clock.millis();
            state.dueNow(q, q.delayed.entrySet().stream()
                    .filter(e -> e.getKey().dueMillis() > now && e.getKey().dueMillis() < PauseState.PARKED_UNTIL.toEpochMilli()
                            && e.getValue().rateAdmittedAttempt().isPresent())
                    .toList(), now);
        });
    }
}
