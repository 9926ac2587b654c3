package io.binomic.core.internal.memory;

import io.binomic.api.Priority;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.Message;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The flow-control state of the in-memory broker, with the same semantics as the Redis broker's
 * {@code ADMIT} script (module-info-docs/flow-control.md): per queue, the GCRA time of each rate
 * limit, the deliveries holding each concurrency limit's slots, and the messages waiting for a
 * slot, oldest first. Not thread-safe: {@link MemoryBroker} calls it under its lock.
 */
final class MemoryLimits {
    /** The latest a message waiting for a slot is looked at again if no release moves it first. */
    static final long SLOT_WAIT_FALLBACK_MILLIS = 10_000;

    /** What the broker does for the limits: store a waiting message, move one back. */
    interface Store {
        /** Stores {@code message} in the delayed set due at {@code dueMillis}; returns its handle there. */
        Object delay(String queue, Message message, long dueMillis);

        /** Moves the delayed message {@code handle} to its queue now, its turn come ({@link FlowLimit#TURN_HEADER}); false if it is gone. */
        boolean moveNow(String queue, Object handle);
    }

    /** One rate limit: the GCRA time of the actual starts, the next turn to hand out, when a waiting message last started. */
    private static final class RateState {
        long tat;
        long nextTurn;
        long lastWaitedStart;

        RateState(long now) {
            this.tat = now;
        }
    }

    private static final class QueueLimits {
        final Map<String, RateState> rates = new HashMap<>();
        final Map<String, Set<String>> slots = new HashMap<>();
        /** Receipt to the concurrency limits it holds slots of (empty: admitted by rate limits only). */
        final Map<String, List<String>> held = new HashMap<>();
        final Map<String, ArrayDeque<Object>> waiting = new HashMap<>();
        /** The priority of each waiting handle: a line is ordered by priority, then by arrival. */
        final Map<Object, Integer> waiterPriority = new HashMap<>();

        Object pollWaiter(ArrayDeque<Object> line) {
            Object handle = line.pollFirst();
            waiterPriority.remove(handle);
            return handle;
        }

        /** Behind the waiters of its priority and higher, ahead of the lower ones. */
        void addWaiter(ArrayDeque<Object> line, Object handle, int priority) {
            ArrayDeque<Object> lower = new ArrayDeque<>();
            while (!line.isEmpty() && waiterPriority.getOrDefault(line.peekLast(), Priority.DEFAULT) < priority) {
                lower.addFirst(line.pollLast());
            }
            line.addLast(handle);
            line.addAll(lower);
            waiterPriority.put(handle, priority);
        }
    }

    private final Map<String, QueueLimits> queues = new HashMap<>();
    private final Store store;

    MemoryLimits(Store store) {
        this.store = store;
    }

    private QueueLimits queue(String name) {
        return queues.computeIfAbsent(name, n -> new QueueLimits());
    }

    /** Decides on one delivery that is pending under its consumer; a waiting one is stored by {@link Store#delay}. */
    Admission decide(Admission.Request request, long now) {
        var d = request.delivery();
        Message m = d.message().orElseThrow();
        QueueLimits q = queue(d.queue());
        if (q.held.containsKey(d.receipt())) {
            return new Admission(d, Admission.Decision.RUN, Optional.empty());
        }
        boolean turn = m.isTurn();
        Message waiting = turn ? m.withTurn(false) : m;
        List<String> concurrency = new ArrayList<>();
        for (FlowLimit limit : request.limits()) {
            if (limit.kind() != FlowLimit.Kind.CONCURRENCY) {
                continue;
            }
            boolean free = q.slots.getOrDefault(limit.id(), Set.of()).size() < limit.permits();
            ArrayDeque<Object> line = q.waiting.get(limit.id());
            if (free && !turn && line != null) {
                // A free slot, but messages waiting for one go first: drop the stale ones (moved back
                // meanwhile by their fallback), give the slot to the oldest live one, queue behind it.
                while (!line.isEmpty()) {
                    if (store.moveNow(d.queue(), q.pollWaiter(line))) {
                        free = false;
                        break;
                    }
                }
            }
            if (!free) {
                long due = now + SLOT_WAIT_FALLBACK_MILLIS;
                Object handle = store.delay(d.queue(), waiting, due);
                q.addWaiter(q.waiting.computeIfAbsent(limit.id(), k -> new ArrayDeque<>()), handle, m.priority());
                return new Admission(d, Admission.Decision.WAIT_SLOT, Optional.of(Instant.ofEpochMilli(due)));
            }
            concurrency.add(limit.id());
        }
        // Rate limits: GCRA on the actual starts (strict), and the waiting line. A message that waited its
        // turn starts when a start is allowed; a new one also needs the line to be empty, or stuck (no
        // waiting message started for two intervals), so it never takes the turn of one that is coming.
        boolean waited = m.isRateAdmitted();
        long conform = now;
        long line = now;
        boolean canJump = true;
        boolean anyRate = false;
        for (FlowLimit limit : request.limits()) {
            if (limit.kind() == FlowLimit.Kind.RATE) {
                anyRate = true;
                RateState st = q.rates.computeIfAbsent(limit.id(), k -> new RateState(now));
                // tolerance: the burst, plus one interval of jitter (a start a little late must not cost the next one its turn)
                conform = Math.max(conform, st.tat - limit.burst() * limit.intervalMillis());
                line = Math.max(line, st.nextTurn);
                if (st.nextTurn > now && now - st.lastWaitedStart <= Math.max(2 * limit.intervalMillis(), 250)) {
                    canJump = false;
                }
            }
        }
        if (anyRate) {
            boolean runs = conform <= now && (waited || canJump);
            long due = Math.max(conform, line);
            for (FlowLimit limit : request.limits()) {
                if (limit.kind() == FlowLimit.Kind.RATE) {
                    RateState st = q.rates.get(limit.id());
                    if (runs) {
                        st.tat = Math.max(st.tat, now) + limit.intervalMillis();
                        if (waited) {
                            st.lastWaitedStart = now;
                        }
                    } else {
                        st.nextTurn = due + limit.intervalMillis();
                    }
                }
            }
            if (!runs) {
                store.delay(d.queue(), waiting.withRateAdmitted(), due);
                return new Admission(d, Admission.Decision.WAIT_RATE, Optional.of(Instant.ofEpochMilli(due)));
            }
        }
        for (String id : concurrency) {
            q.slots.computeIfAbsent(id, k -> new LinkedHashSet<>()).add(d.receipt());
        }
        q.held.put(d.receipt(), List.copyOf(concurrency));
        return new Admission(d, Admission.Decision.RUN, Optional.empty());
    }

    /** Releases what {@code receipt} holds (its settlement was applied); each slot freed moves the oldest waiter back. */
    void release(String queueName, String receipt) {
        QueueLimits q = queues.get(queueName);
        if (q == null) {
            return;
        }
        List<String> ids = q.held.remove(receipt);
        if (ids == null) {
            return;
        }
        for (String id : ids) {
            Set<String> holders = q.slots.get(id);
            if (holders != null && holders.remove(receipt) && holders.isEmpty()) {
                q.slots.remove(id);
            }
            ArrayDeque<Object> line = q.waiting.get(id);
            while (line != null && !line.isEmpty()) {
                if (store.moveNow(queueName, q.pollWaiter(line))) {
                    break;
                }
            }
            if (line != null && line.isEmpty()) {
                q.waiting.remove(id);
            }
        }
    }

    /** Limit {@code id} of {@code queueName} changed: its waiters go back to the queue, its rate state starts afresh. */
    void queueLimitsChanged(String queueName, String id) {
        QueueLimits q = queues.get(queueName);
        if (q == null) {
            return;
        }
        q.rates.remove(id);
        ArrayDeque<Object> line = q.waiting.remove(id);
        while (line != null && !line.isEmpty()) {
            store.moveNow(queueName, q.pollWaiter(line));
        }
    }

    int slotsHeld(String queueName, String id) {
        QueueLimits q = queues.get(queueName);
        return q == null ? 0 : q.slots.getOrDefault(id, Set.of()).size();
    }
}
