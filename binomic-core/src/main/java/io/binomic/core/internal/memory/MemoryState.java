package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.spi.Message;
import io.binomic.api.Priority;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.api.spi.Delivery;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * What the memory broker and its capabilities share: the queues, and the one lock that guards
 * them and every capability's own state, so that a step touching several (a settle that acks,
 * releases a limit slot, ends a job and gives back a unique key) is atomic as a Redis script is.
 * Whatever is called "under the lock" must be called while {@link #lock} is held.
 */
final class MemoryState {

    final BrokerConfig config;
    final Clock clock;
    final System.Logger log;
    final ReentrantLock lock = new ReentrantLock();
    final Condition messageArrived = lock.newCondition();
    final Map<String, QueueState> queues = new HashMap<>();
    /** The starvation bound of priorities ({@link Priority#FAIRNESS_OPTION}). */
    private final int lowerFirstEvery;
    private long nextEntry;
    boolean closed;
    private volatile MemoryBroker.SubmissionListener submissionListener;

    MemoryState(BrokerConfig config, Clock clock, System.Logger log) {
        this.config = config;
        this.clock = clock;
        this.log = log;
        this.lowerFirstEvery = Priority.fairness(config);
    }

    /** A message stored in a queue, with the id a stream would give it. */
    record Entry(String receipt, Message message) { }

    static final class Pending {
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

        Delivery delivery(String queue) { return Delivery.of(queue, entry.receipt(), entry.message(), deliveryCount); }
    }

    /** The last fired tick of a periodic job, forgotten at {@code expiresAt} as a Redis key with a TTL would be. */
    record TickClaim(long tickMillis, Instant expiresAt) { }

    record Scheduled(long dueMillis, long sequence) implements Comparable<Scheduled> {
        @Override
        public int compareTo(Scheduled o) {
            int byDue = Long.compare(dueMillis, o.dueMillis);
            return byDue != 0 ? byDue : Long.compare(sequence, o.sequence);
        }
    }

    static final class QueueState {
        final PriorityReady<Entry> ready;
        final LinkedHashMap<String, Pending> pending = new LinkedHashMap<>();
        final TreeMap<Scheduled, Message> delayed = new TreeMap<>();
        final TreeMap<String, DeadLetter> deadLetters = new TreeMap<>();
        final Map<String, Long> consumersLastSeenNanos = new HashMap<>();
        /** Whether a consumer ever read it: what a Redis consumer group tells, which outlives its consumers. */
        boolean read;
        final Map<String, TickClaim> lastTick = new HashMap<>();
        final TreeMap<Instant, ActivityBucket> activity = new TreeMap<>();

        QueueState(int lowerFirstEvery) {
            ready = new PriorityReady<>(lowerFirstEvery, e -> e.message().priority());
        }
    }

    /** The queue {@code name}, created empty when new. Called under the lock. */
    QueueState queue(String name) { return queues.computeIfAbsent(name, n -> new QueueState(lowerFirstEvery)); }

    /** Receipts sort like stream ids: fixed width, increasing. Called under the lock. */
    String newReceipt() { return String.format("%019d", ++nextEntry); }

    /** Appends {@code m} to the ready messages of {@code queue}, waking waiting fetches. Called under the lock. */
    void addReady(String queue, Message m) {
        queue(queue).ready.addLast(new Entry(newReceipt(), m));
        messageArrived.signalAll();
    }

    /** Stores {@code m} in the delayed set of {@code queue}, due at {@code dueMillis}; returns its slot. Called under the lock. */
    Scheduled delay(String queue, Message m, long dueMillis) {
        Scheduled slot = new Scheduled(dueMillis, ++nextEntry);
        queue(queue).delayed.put(slot, m);
        return slot;
    }

    /** Makes the delayed {@code entries} of {@code q} due at {@code nowMillis}, keeping their order. Called under the lock. */
    void dueNow(QueueState q, List<Map.Entry<Scheduled, Message>> entries, long nowMillis) {
        for (Map.Entry<Scheduled, Message> e : entries) {
            q.delayed.remove(e.getKey());
            q.delayed.put(new Scheduled(nowMillis, ++nextEntry), e.getValue());
        }
    }

    /**
     * The fence: the delivery is still pending and held by {@code consumer}, at least at the count
     * it was handed out with (a consumer that reclaimed its own delivery still settles it).
     */
    static boolean owns(Pending p, String consumer, Delivery d) {
        return p != null && p.owner.equals(consumer) && p.deliveryCount >= d.deliveryCount();
    }

    /** The entries of {@code byQueue} for {@code names} that it has, in the order of {@code names}. Called under the lock. */
    static <V> Map<String, V> present(Map<String, V> byQueue, List<String> names) {
        Map<String, V> out = new LinkedHashMap<>();
        for (String name : names) {
            V value = byQueue.get(name);
            if (value != null) {
                out.put(name, value);
            }
        }
        return out;
    }

    /** Sets the setting of {@code queue}, or clears it when {@code value} is {@code theDefault}, which is not stored. */
    static <V> void setOrClear(Map<String, V> byQueue, String queue, V value, boolean theDefault) {
        if (theDefault) {
            byQueue.remove(queue);
        } else {
            byQueue.put(queue, value);
        }
    }

    void onSubmission(MemoryBroker.SubmissionListener listener) { this.submissionListener = listener; }

    /** Tells the submission listener what was stored. Called outside the lock. */
    void notifySubmission(List<Message> messages, Instant due) {
        MemoryBroker.SubmissionListener listener = submissionListener;
        if (listener != null) {
            listener.stored(messages, due);
        }
    }

    <T> T locked(Supplier<T> action) {
        lock.lock();
        try {
            return action.get();
        } finally {
            lock.unlock();
        }
    }

    void locked(Runnable action) {
        locked(() -> {
            action.run();
            return null;
        });
    }
}
