package io.binomic.core.internal;

import io.binomic.api.BrokerException;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.QueuePartitions;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32;

/**
 * Which physical queue (partition) a message of a logical queue goes to, and which physical
 * queues a worker reads. The partitions of a queue ({@link QueuePartitions}) are read from the
 * broker at most every {@value #REFRESH_MILLIS} ms per queue (counted from the end of the last read, failed
 * or not), never per submit. Only the first look at a queue waits for its read; after that the
 * last answer is used while a fresh one is read in the background, so a submit never waits for a
 * refresh: against a broker that does not answer it would block for a command timeout before its
 * own write did the same. When the broker cannot answer, the last answer stays (an unpartitioned
 * queue before the first). A message
 * without a key goes round robin over partitions {@code 0..count-1}, from a random one in each process (so that
 * short-lived producers, one job each, spread too); one with a key goes to the
 * partition the CRC-32 of the key picks, the same in every process.
 */
public final class PartitionRouter {
    private static final System.Logger LOG = System.getLogger(PartitionRouter.class.getName());
    /** How often the partitions of a queue are read, at most. */
    public static final long REFRESH_MILLIS = 1000;

    private record Known(QueuePartitions partitions, long readNanos) { }

    private record FailedRead(long endedNanos, long waitedNanos) { }

    private final Optional<Partitioning> partitioning;
    private final Map<String, Known> known = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> turns = new ConcurrentHashMap<>();
    /**
     * When the last failed first read of each queue's partitions ended ({@link System#nanoTime()}) and how long it
     * waited: a submit that made it and whose write then failed too says it waited for both ({@link #withFailedFirstRead(String, long, RuntimeException)}).
     */
    private final Map<String, FailedRead> failedFirstReads = new ConcurrentHashMap<>();
    /** The queues whose partitions are being read in the background: one read at a time each. */
    private final Set<String> refreshing = ConcurrentHashMap.newKeySet();

    public PartitionRouter(Broker broker) {
        this.partitioning = broker.capability(Partitioning.class);
    }

    /** The partitions of logical queue {@code queue}, read at most every second. */
    public QueuePartitions of(String queue) {
        Known k = known.get(queue);
        if (k != null && System.nanoTime() - k.readNanos() < REFRESH_MILLIS * 1_000_000) {
            return k.partitions(); // the submit path: no allocation while the last read is fresh
        }
        return of(List.of(queue)).get(queue);
    }

    /** The partitions of each logical queue, in one broker call for those not read within the last second. */
    public Map<String, QueuePartitions> of(List<String> queues) {
        long now = System.nanoTime();
        List<String> unread = new ArrayList<>();
        Map<String, Known> due = new LinkedHashMap<>();
        // What this call answers, kept here rather than looked up again at the end: another thread's
        // forget() (a pause, a replay) may remove a queue from the map meanwhile.
        Map<String, QueuePartitions> out = new LinkedHashMap<>();
        for (String q : queues) {
            Known k = known.get(q);
            if (k == null) {
                unread.add(q);
            } else if (now - k.readNanos() >= REFRESH_MILLIS * 1_000_000 && refreshing.add(q)) {
                due.put(q, k);
            }
            out.put(q, k == null ? QueuePartitions.ONE : k.partitions());
        }
        if (!due.isEmpty()) {
            Thread.ofVirtual().name("binomic-partitions-refresh").start(() -> {
                try {
                    read(due);
                } finally {
                    refreshing.removeAll(due.keySet());
                }
            });
        }
        if (!unread.isEmpty()) {
            Map<String, Known> none = new LinkedHashMap<>();
            unread.forEach(q -> none.put(q, null));
            out.putAll(read(none));
        }
        return out;
    }

    /**
     * Reads the partitions of the queues of {@code read}, each stored only if what is known of it is
     * still the value given there (null: nothing), so that a read begun before a {@link #forget}
     * does not put back what this process has just changed.
     */
    private Map<String, QueuePartitions> read(Map<String, Known> read) {
        List<String> queues = List.copyOf(read.keySet());
        Map<String, QueuePartitions> out = new LinkedHashMap<>();
        long startedNanos = System.nanoTime();
        try {
            Map<String, QueuePartitions> answer = partitioning.map(p -> p.partitions(queues)).orElse(Map.of());
            long readNanos = System.nanoTime();
            for (String q : queues) {
                QueuePartitions p = answer.getOrDefault(q, QueuePartitions.ONE);
                out.put(q, p);
                Known before = read.get(q);
                if (store(q, before, new Known(p, readNanos)) && before != null && !before.partitions().equals(p)) {
                    LOG.log(Level.INFO, "queue {0}: partitions now {1} (workers read {2})", q, p.count(), p.highest());
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "reading the partitions of {0} failed ({1}); keeping the last ones read", queues, e.getMessage());
            // Stamped when the read ended, not when it began: a read that failed after the broker's
            // command timeout would otherwise be stale already, and every job of the same submit
            // (a batch's, a workflow's) would wait that timeout again.
            long failedNanos = System.nanoTime();
            for (String q : queues) {
                Known before = read.get(q);
                QueuePartitions kept = before == null ? QueuePartitions.ONE : before.partitions();
                out.put(q, kept);
                store(q, before, new Known(kept, failedNanos));
                if (before == null) {
                    failedFirstReads.put(q, new FailedRead(failedNanos, failedNanos - startedNanos));
                }
            }
        }
        return out;
    }

    /**
     * {@code failure} of a submit to {@code queue} begun at {@code beganNanos} ({@link System#nanoTime()}), saying
     * how long the submit blocked in all when it first waited for a read of the queue's partitions that failed
     * too: the write's own message names its bound alone (one command timeout), while a process's first submit
     * to a queue waits for the read before it (up to twice that). Any other failure is returned as it is.
     */
    public RuntimeException withFailedFirstRead(String queue, long beganNanos, RuntimeException failure) {
        return withFailedFirstRead(List.of(queue), beganNanos, failure);
    }

    /** {@link #withFailedFirstRead(String, long, RuntimeException)} for a submit to {@code queues}, read in one call. */
    public RuntimeException withFailedFirstRead(Collection<String> queues, long beganNanos, RuntimeException failure) {
        FailedRead read = queues.stream().map(failedFirstReads::get).filter(r -> r != null && r.endedNanos() - beganNanos >= 0)
                .findFirst().orElse(null);
        if (read == null || failure.getClass() != BrokerException.class) {
            return failure;
        }
        long total = (System.nanoTime() - beganNanos) / 1_000_000;
        BrokerException out = new BrokerException(failure.getMessage() + " (this submit blocked " + total + " ms in all: before"
                + " the write it waited " + read.waitedNanos() / 1_000_000 + " ms for the queue's partitions, which a process reads"
                + " at its first submit to a queue, and that read failed too)", failure.getCause());
        out.setStackTrace(failure.getStackTrace());
        for (Throwable suppressed : failure.getSuppressed()) {
            out.addSuppressed(suppressed);
        }
        return out;
    }

    private boolean store(String queue, Known expected, Known value) {
        return expected == null ? known.putIfAbsent(queue, value) == null : known.replace(queue, expected, value);
    }

    /** Forgets what was read of {@code queue}, so the next look reads it again (after this process changed it). */
    public void forget(String queue) { known.remove(queue); }

    /** The physical queues a worker reads for {@code logicalQueues}: every partition up to the highest count ever set. */
    public List<String> physical(List<String> logicalQueues) {
        Map<String, QueuePartitions> all = of(logicalQueues);
        List<String> out = new ArrayList<>();
        for (String q : logicalQueues) {
            out.addAll(all.get(q).all(q));
        }
        return out;
    }

    /** {@code message} on the partition of its queue that {@code key} picks, or the next in turn when {@code key} is null. */
    public Message route(Message message, String key) {
        QueuePartitions p = of(message.queue());
        if (p.count() == 1) {
            return message;
        }
        int index = key == null
                ? Math.floorMod(turns.computeIfAbsent(message.queue(), q -> new AtomicInteger(ThreadLocalRandom.current().nextInt(QueuePartitions.MAX))).getAndIncrement(), p.count())
                : indexOf(key, p.count());
        return index == 0 ? message : message.withQueue(QueuePartitions.physical(message.queue(), index));
    }

    /** The partition {@code key} picks among {@code count}: the CRC-32 of its UTF-8 bytes, modulo the count. */
    public static int indexOf(String key, int count) {
        CRC32 crc = new CRC32();
        crc.update(key.getBytes(StandardCharsets.UTF_8));
        return (int) (crc.getValue() % count);
    }
}
