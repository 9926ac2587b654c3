package io.binomic.redis.internal;

import static io.binomic.redis.internal.RedisKeys.GROUP;

import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.SettledCleanup;
import io.binomic.api.spi.Settlement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.redisson.api.RScript;
import org.redisson.client.codec.StringCodec;

/**
 * The broker's settle, and the trimming of acknowledged entries it does on the way
 * ({@link SettledCleanup}): acked entries are not deleted one by one but trimmed in bulk, at most
 * five times a second per queue, with {@code XTRIM MINID} below the group's oldest pending and
 * last-delivered entries.
 */
final class RedisSettle implements SettledCleanup {
    private static final Duration TRIM_EVERY = Duration.ofMillis(200);

    private final RedisContext redis;
    private final RedisPriorities priorities;
    /** When each queue's acknowledged entries were last trimmed (System.nanoTime). */
    private final Map<String, Long> lastTrim = new ConcurrentHashMap<>();
    /**
     * Whether this broker keeps batches and workflows ({@link RedisBatches}, {@link RedisWorkflows}: not on a Cluster), so
     * records the settlement of their jobs.
     */
    private final boolean batches;
    /** On a Cluster, the bookkeeping of batches ({@link ClusterBatches}): kept in outboxes, then forwarded; else null. */
    private final ClusterBatches clusterBatches;
    /** On a Cluster, the bookkeeping of workflows ({@link ClusterWorkflows}), as that of batches; else null. */
    private final ClusterWorkflows clusterWorkflows;

    RedisSettle(RedisContext redis, RedisPriorities priorities, boolean batches, ClusterBatches clusterBatches,
            ClusterWorkflows clusterWorkflows) {
        this.redis = redis;
        this.priorities = priorities;
        this.batches = batches;
        this.clusterBatches = clusterBatches;
        this.clusterWorkflows = clusterWorkflows;
    }

    /**
     * Every queue's settlements as one fenced script ({@link LuaScripts#SETTLE}), all queues in one
     * pipeline: one round trip per call, whatever the mix of acks, retries and dead letters. At most
     * once per {@link #TRIM_EVERY} (200 ms) and queue, the same pipeline also trims acknowledged entries
     * ({@link LuaScripts#TRIM_ACKED}), which replaces an XDEL per ack.
     */
    SettleReport settle(String consumer, List<Settlement> settlements, Map<String, Integer> handOff) {
        if (settlements.isEmpty()) {
            return SettleReport.ALL_APPLIED;
        }
        if (ClusterWrites.splitByQueue(redis) && ClusterWrites.severalQueues(settlements, x -> x.delivery().queue())) {
            return ClusterWrites.settleByQueue(settlements, one -> settle(consumer, one, handOff));
        }
        Map<String, List<Settlement>> byQueue = new LinkedHashMap<>();
        for (Settlement s : settlements) {
            if (s instanceof Settlement.RetryLater retry) {
                redis.checkSize(retry.next());
            }
            byQueue.computeIfAbsent(RedisPriorities.streamOf(s.delivery()), q -> new ArrayList<>()).add(s);
        }
        // the script's fence lists runs of consecutive ids (LuaScripts.SETTLE); stable, so a repeated entry keeps its order
        byQueue.values().forEach(list -> list.sort(BY_ENTRY_ID));
        String dlqMaxCount = Integer.toString(redis.config.deadLetterMaxCount());
        String dlqMinId = Long.toString(Instant.now().minus(redis.config.deadLetterMaxAge()).toEpochMilli());
        long now = System.nanoTime();
        Set<String> trimmed = new HashSet<>();
        for (String queue : byQueue.keySet()) {
            Long last = lastTrim.get(queue);
            if (last == null || now - last >= TRIM_EVERY.toNanos()) {
                lastTrim.put(queue, now);
                trimmed.add(queue);
            }
        }
        // Sent again as soon as Redis answers after a freeze: held outcomes written late let a stop give them up.
        String firstQueue = byQueue.keySet().iterator().next();
        String probeKey = RedisPriorities.streamKey(redis.keys(RedisPriorities.queueOf(firstQueue)), firstQueue);
        List<?> replies = redis.pipelineWriteResent("settle on queues " + byQueue.keySet(), RedisContext.SETTLE_AGAIN, probeKey, batch ->
                byQueue.forEach((queue, list) -> {
                    RedisKeys k = redis.keys(RedisPriorities.queueOf(queue));
                    List<Object> settleKeys = new ArrayList<>(List.of(RedisPriorities.streamKey(k, queue), k.delayed(), k.deadLetters()));
                    Object[] args = settleArguments(consumer, dlqMaxCount, dlqMinId, list, k, settleKeys, handOff.getOrDefault(queue, 0));
                    batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, LuaScripts.SETTLE,
                            RScript.ReturnType.LIST, settleKeys, args);
                    if (trimmed.contains(queue)) {
                        batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, LuaScripts.TRIM_ACKED,
                                RScript.ReturnType.LONG, List.of(RedisPriorities.streamKey(k, queue)), GROUP);
                    }
                }));
        List<Settlement> reclaimed = new ArrayList<>();
        List<Settlement> notPending = new ArrayList<>();
        List<Delivery> handed = new ArrayList<>();
        int reply = 0;
        for (Map.Entry<String, List<Settlement>> e : byQueue.entrySet()) {
            if (replies.get(reply++) instanceof List<?> positions) {
                for (Object position : positions) {
                    if (position instanceof List<?> entry) {
                        // a delivery handed out onto a slot this settle freed: id, then fields and values
                        Map<String, String> fields = new LinkedHashMap<>();
                        for (int j = 1; j + 1 < entry.size(); j += 2) {
                            fields.put(String.valueOf(entry.get(j)), String.valueOf(entry.get(j + 1)));
                        }
                        handed.add(StreamFields.toDelivery(e.getKey(), String.valueOf(entry.getFirst()), fields, 1));
                        continue;
                    }
                    int at = Math.toIntExact(ScriptReplies.toLong(position));
                    (at > 0 ? reclaimed : notPending).add(e.getValue().get(Math.abs(at) - 1));
                }
            }
            if (trimmed.contains(e.getKey())) {
                reply++;
            }
        }
        if (clusterBatches != null) {
            forwardToBatches(settlements, reclaimed, notPending);
        }
        return reclaimed.isEmpty() && notPending.isEmpty() && handed.isEmpty() ? SettleReport.ALL_APPLIED
                : new SettleReport(reclaimed, notPending, handed);
    }

    /** The applied settlements of jobs of batches and workflows, their outcomes kept in the outboxes, applied to them now. */
    private void forwardToBatches(List<Settlement> settlements, List<Settlement> reclaimed, List<Settlement> notPending) {
        Set<Settlement> skipped = Collections.newSetFromMap(new IdentityHashMap<>());
        skipped.addAll(reclaimed);
        skipped.addAll(notPending);
        List<Settlement> ofBatches = new ArrayList<>();
        List<Settlement> ofWorkflows = new ArrayList<>();
        for (Settlement s : settlements) {
            Message m = skipped.contains(s) ? null : s.delivery().message().orElse(null);
            if (m != null && m.batch() != null) {
                ofBatches.add(s);
            }
            if (m != null && m.workflow() != null) {
                ofWorkflows.add(s);
            }
        }
        if (!ofBatches.isEmpty()) {
            clusterBatches.forward(ofBatches);
        }
        if (!ofWorkflows.isEmpty()) {
            clusterWorkflows.forward(ofWorkflows);
        }
    }

    @Override
    public long removeSettled(String queue) {
        lastTrim.put(queue, System.nanoTime());
        return priorities.removeSettled(queue);
    }

    /** Stream entry ids ({@code <ms>-<seq>}) in Redis' order; anything else after them, as text. */
    static final Comparator<Settlement> BY_ENTRY_ID = (a, b) ->
            compareEntryIds(RedisPriorities.entryId(a.delivery().receipt()), RedisPriorities.entryId(b.delivery().receipt()));

    static int compareEntryIds(String a, String b) {
        int dashA = a.indexOf('-');
        int dashB = b.indexOf('-');
        boolean idA = isEntryId(a, dashA);
        boolean idB = isEntryId(b, dashB);
        if (idA != idB) {
            return idA ? -1 : 1;
        }
        if (!idA) {
            return a.compareTo(b);
        }
        int c = Long.compareUnsigned(Long.parseUnsignedLong(a, 0, dashA, 10), Long.parseUnsignedLong(b, 0, dashB, 10));
        return c != 0 ? c : Long.compareUnsigned(Long.parseUnsignedLong(a, dashA + 1, a.length(), 10),
                Long.parseUnsignedLong(b, dashB + 1, b.length(), 10));
    }

    private static boolean isEntryId(String s, int dash) {
        if (dash < 1 || dash > 20 || dash == s.length() - 1 || s.length() - dash - 1 > 20) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (i != dash && (c < '0' || c > '9')) {
                return false;
            }
        }
        return true;
    }

    private Object[] settleArguments(String consumer, String dlqMaxCount, String dlqMinId, List<Settlement> settlements,
                                            RedisKeys k, List<Object> keys, int handOff) {
        List<Object> args = new ArrayList<>(6 + settlements.size() * 3);
        args.add(GROUP);
        args.add(consumer);
        args.add(dlqMaxCount);
        args.add(dlqMinId);
        if (handOff > 0) {
            args.add("H");
            args.add(Integer.toString(handOff));
        }
        for (Settlement s : settlements) {
            Delivery d = s.delivery();
            String id = RedisPriorities.entryId(d.receipt());
            switch (s) {
                case Settlement.Ack ack when d.deliveryCount() == 1 ->
                    // the drain's common case as one argument: the script reads an ack of count 1 from the id alone
                    args.add(id);
                case Settlement.Ack ack -> args.addAll(List.of("A", id, Integer.toString(d.deliveryCount())));
                case Settlement.RetryLater retry -> args.addAll(List.of("R", id, Integer.toString(d.deliveryCount()),
                        Long.toString(retry.dueAt().toEpochMilli()), StreamFields.toJson(StreamFields.encode(retry.next()))));
                case Settlement.DeadLetter dead -> {
                    Map<String, String> fields = DeadLetterFields.encode(d, dead.failure());
                    args.addAll(List.of("D", id, Integer.toString(d.deliveryCount()), Integer.toString(fields.size() * 2)));
                    ScriptReplies.addFields(args, fields);
                }
            }
            if (s.job() != null) {
                keys.add(k.job(s.job().id()));
                args.add("J");
                args.add(Integer.toString(keys.size()));
                RedisJobStore.addJobArguments(args, s.job(), k);
            }
            RedisUniqueSubmits.addSettleArguments(s, k, keys, args);
            Message m = d.message().orElse(null);
            if (m != null && m.batch() != null && batches) {
                RedisBatches.addSettleArguments(s, m, k.prefix(), keys, args);
            } else if (m != null && m.batch() != null && clusterBatches != null) {
                ClusterBatches.addSettleArguments(s, m, k, keys, args);
            }
            if (m != null && m.workflow() != null && batches) {
                RedisWorkflows.addSettleArguments(s, m, k.prefix(), keys, args);
            } else if (m != null && m.workflow() != null && clusterWorkflows != null) {
                ClusterWorkflows.addSettleArguments(s, m, k, keys, args);
            }
        }
        return args.toArray();
    }
}
