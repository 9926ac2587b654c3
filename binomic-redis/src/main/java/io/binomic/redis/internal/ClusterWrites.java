package io.binomic.redis.internal;

import io.binomic.api.spi.Message;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Writes that must confirm replication ({@code wait.replicas}) on a Redis Cluster go one queue at a
 * time. A Redisson pipeline over keys of several masters ends with one {@code WAIT} per master and
 * reports the <em>sum</em> of their replies: with {@code wait.replicas = 1}, one master's confirmed
 * replica would then hide another master whose replica confirmed nothing. All keys of a queue are in
 * one slot, so a pipeline of one queue reaches one master and its {@code WAIT} reply is that master's.
 *
 * <p>Its writes must also be one command: Redisson follows a {@code MOVED} reply by sending the
 * redirected commands and the {@code WAIT} to the new master, so a pipeline that a demoted master
 * took in part (then dropped, resyncing from its replacement) would be confirmed by the new one for
 * the rest alone. Enqueues go as one script per queue and chunk, unique submits one per call.
 */
final class ClusterWrites {
    private ClusterWrites() {
    }

    /** Whether writes spanning queues must be split: waiting for replicas, on a cluster. */
    static boolean splitByQueue(RedisContext redis) {
        return redis.replicaWait.on() && redis.setup.redisson().isClusterConfig();
    }

    /** {@code settle} per queue, the reports joined; a failure of any queue fails the call (the worker resends, fenced). */
    static SettleReport settleByQueue(List<Settlement> settlements, Function<List<Settlement>, SettleReport> settleOneQueue) {
        Map<String, List<Settlement>> byQueue = new LinkedHashMap<>();
        settlements.forEach(s -> byQueue.computeIfAbsent(s.delivery().queue(), q -> new ArrayList<>()).add(s));
        List<Settlement> reclaimed = new ArrayList<>();
        List<Settlement> notPending = new ArrayList<>();
        List<io.binomic.api.spi.Delivery> handed = new ArrayList<>();
        for (List<Settlement> one : byQueue.values()) {
            SettleReport r = settleOneQueue.apply(one);
            reclaimed.addAll(r.reclaimed());
            notPending.addAll(r.notPending());
            handed.addAll(r.handed());
        }
        return reclaimed.isEmpty() && notPending.isEmpty() && handed.isEmpty() ? SettleReport.ALL_APPLIED
                : new SettleReport(reclaimed, notPending, handed);
    }

    /** {@code enqueueAll} per queue, each queue's messages in their order. */
    static void enqueueByQueue(List<Message> messages, Consumer<List<Message>> enqueueOneQueue) {
        Map<String, List<Message>> byQueue = new LinkedHashMap<>();
        messages.forEach(m -> byQueue.computeIfAbsent(m.queue(), q -> new ArrayList<>()).add(m));
        byQueue.values().forEach(enqueueOneQueue);
    }

    /** Whether {@code items} span more than one queue. */
    static <T> boolean severalQueues(List<T> items, Function<T, String> queue) {
        return items.stream().map(queue).distinct().limit(2).count() > 1;
    }
}
