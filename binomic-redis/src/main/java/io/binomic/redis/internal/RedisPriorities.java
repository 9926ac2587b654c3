package io.binomic.redis.internal;

import io.binomic.api.BrokerException;
import io.binomic.api.spi.Message;
import io.binomic.api.Priority;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.PriorityFetchOrder;
import io.binomic.api.spi.QueuePartitions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import java.util.stream.IntStream;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.client.codec.StringCodec;

/**
 * Priorities on Redis. A queue's messages of the default priority are on
 * {@code binomic:{q}:stream}, so a queue that uses no priority costs one XREADGROUP per fetch. A message of another level goes to {@code binomic:{q}:stream:p<level>}
 * ({@link LuaScripts#ENQUEUE_AT_LEVEL}), and the level joins the set {@code binomic:{q}:stream:levels}. A worker
 * reads that set at most once a second per queue; when a queue has levels, one fetch is one
 * script ({@link LuaScripts#FETCH_LEVELS}) that names the level streams holding entries not handed
 * out yet, highest first (now and then a lower one first: {@link PriorityFetchOrder}), then a plain
 * XREADGROUP per such level until {@code max} in total (one in a backlog), and only when all are
 * empty a blocking XREADGROUP over them.
 *
 * <p>A delivery from a level stream carries the level in its receipt, {@code <entry id>@<level>}
 * (the default level's receipt is the plain entry id), so settling, renewing and the
 * fences apply to the stream it came from.
 */
final class RedisPriorities {
    private static final long LEVELS_FRESH_NANOS = Duration.ofSeconds(1).toNanos();
    private static final int[] DEFAULT_ONLY = {Priority.DEFAULT};

    private final RedisContext redis;
    private final QueueFetchFailures fetchFailures;
    private final int lowerFirstEvery;
    private final Map<String, PriorityFetchOrder> orders = new ConcurrentHashMap<>();
    private final Map<String, Levels> levels = new ConcurrentHashMap<>();
    /** When each queue's level streams were last looked for ({@link LuaScripts#LEVELS}). */
    private final Map<String, Long> levelStreamsProbedAt = new ConcurrentHashMap<>();
    private static final long LEVEL_STREAMS_PROBE_NANOS = Duration.ofSeconds(10).toNanos();
    /** Where each stream's XAUTOCLAIM scan stopped, so the next reclaim goes on from there. */
    private final Map<String, String> reclaimCursors = new ConcurrentHashMap<>();
    private final AtomicInteger rotation = new AtomicInteger();

    /** The levels of a queue in use, highest first (the default always among them), and when they were read. */
    private record Levels(int[] descending, long readAtNanos) { }

    /**
     * How a read of a queue's levels or counts is sent: as every call ({@link RedisContext#eval},
     * Redisson's retries included), or once within a bound ({@link RedisContext#evalOnce}).
     */
    @FunctionalInterface
    interface Reads {
        List<Object> list(String what, String script, List<Object> keys, Object... args);
    }

    /** Reads sent as every call is. */
    Reads retried() {
        return (what, script, keys, args) -> redis.eval(what, script, RScript.ReturnType.LIST, keys, args);
    }

    /** Reads sent again when a connection does not answer while Redis does ({@link RedisContext#evalResent}). */
    private Reads resent() {
        return (what, script, keys, args) -> redis.evalResent(what, script, RScript.ReturnType.LIST, keys, args);
    }

    RedisPriorities(RedisContext redis, QueueFetchFailures fetchFailures, int lowerFirstEvery) {
        this.redis = redis;
        this.fetchFailures = fetchFailures;
        this.lowerFirstEvery = lowerFirstEvery;
    }

    // ---- names ---------------------------------------------------------------------------

    static String streamKey(RedisKeys k, int level) {
        return level == Priority.DEFAULT ? k.stream() : k.stream() + ":p" + level;
    }

    static String receipt(String entryId, int level) {
        return level == Priority.DEFAULT ? entryId : entryId + "@" + level;
    }

    static int levelOf(String receipt) {
        int at = receipt.indexOf('@');
        return at < 0 ? Priority.DEFAULT : Priority.parse(receipt.substring(at + 1));
    }

    /** The stream entry id of a receipt. */
    static String entryId(String receipt) {
        int at = receipt.indexOf('@');
        return at < 0 ? receipt : receipt.substring(0, at);
    }

    /** Which stream a delivery came from, as a key to group settlements by: {@code queue}, or {@code queue@level}. */
    static String streamOf(Delivery d) {
        int level = levelOf(d.receipt());
        return level == Priority.DEFAULT ? d.queue() : d.queue() + LEVEL_SEPARATOR + level;
    }

    /**
     * Separates a queue from a priority level in a {@link #streamOf} key: a character no queue name
     * has, not even a partition's ({@code q@2}: see {@link QueuePartitions}).
     */
    private static final char LEVEL_SEPARATOR = '#';

    /** The queue of a {@link #streamOf} key (queue names have no '#'). */
    static String queueOf(String stream) {
        int at = stream.indexOf(LEVEL_SEPARATOR);
        return at < 0 ? stream : stream.substring(0, at);
    }

    /** The Redis key of a {@link #streamOf} key. */
    static String streamKey(RedisKeys k, String stream) {
        int at = stream.indexOf(LEVEL_SEPARATOR);
        return at < 0 ? k.stream() : streamKey(k, Priority.parse(stream.substring(at + 1)));
    }

    private static Delivery withLevel(Delivery d, int level) {
        return level == Priority.DEFAULT ? d
                : new Delivery(d.queue(), receipt(d.receipt(), level), d.message(), d.deliveryCount(), d.rawFields(), d.decodeProblem());
    }

    // ---- levels in use -------------------------------------------------------------------

    /** The levels of {@code queue} in use, highest first, read from Redis at most once a second. */
    int[] levels(String queue) {
        return levels(queue, retried());
    }

    /** {@link #levels(String)}, read (when not fresh) through {@code reads}. */
    int[] levels(String queue, Reads reads) {
        Levels known = levels.get(queue);
        long now = System.nanoTime();
        if (known != null && now - known.readAtNanos < LEVELS_FRESH_NANOS) {
            return known.descending;
        }
        Long probed = levelStreamsProbedAt.get(queue);
        boolean probe = probed == null || now - probed >= LEVEL_STREAMS_PROBE_NANOS;
        List<Object> members = reads.list("levels of queue '" + queue + "'", LuaScripts.LEVELS,
                List.of(redis.keys(queue).stream()), probe ? "1" : "0");
        if (probe) {
            levelStreamsProbedAt.put(queue, now);
        }
        int[] read = descending(members.stream().map(String::valueOf).filter(p -> p.matches("[0-9]")).mapToInt(Priority::parse));
        levels.put(queue, new Levels(read, now));
        return read;
    }

    private static int[] descending(IntStream used) {
        return IntStream.concat(used, IntStream.of(Priority.DEFAULT)).distinct()
                .map(p -> -p).sorted().map(p -> -p).toArray();
    }

    /** True when any of {@code queues} has a level other than the default in use. */
    boolean anyLevels(List<String> queues) {
        for (String queue : queues) {
            try {
                if (levels(queue).length > 1) {
                    return true;
                }
            } catch (BrokerException e) {
                if (RedisContext.serverUnreachable(e)) {
                    throw e;
                }
                return true; // its set of levels is unreadable: the priority fetch reads and reports each queue on its own
            }
        }
        return false;
    }

    /** This client just used {@code level} of {@code queue}: no need to wait for the next read of the set. */
    void noteLevel(String queue, int level) {
        Levels known = levels.get(queue);
        if (known != null && Arrays.stream(known.descending).noneMatch(p -> p == level)) {
            levels.put(queue, new Levels(descending(IntStream.concat(Arrays.stream(known.descending),
                    IntStream.of(level))), known.readAtNanos));
        }
    }

    // ---- enqueue -------------------------------------------------------------------------

    /** Enqueues a message of a priority other than the default: one script, one round trip. */
    void enqueue(Message m) {
        RedisKeys k = redis.keys(m.queue());
        redis.writeOnce.sendScript("enqueue on queue '" + m.queue() + "'", WriteOnce.Effect.enqueue("message id " + m.id()),
                LuaScripts.ENQUEUE_AT_LEVEL, RScript.ReturnType.LONG, enqueueKeys(k, m),
                RedisBroker.enqueueArguments(m, Integer.toString(m.priority())));
        noteLevel(m.queue(), m.priority());
    }

    /** Adds the enqueue of a message of a priority other than the default to a pipeline. */
    void enqueue(RBatch batch, Message m) {
        RedisKeys k = redis.keys(m.queue());
        batch.getScript(StringCodec.INSTANCE).evalAsync(k.stream(), RScript.Mode.READ_WRITE, LuaScripts.ENQUEUE_AT_LEVEL,
                RScript.ReturnType.LONG, enqueueKeys(k, m), RedisBroker.enqueueArguments(m, Integer.toString(m.priority())));
        noteLevel(m.queue(), m.priority());
    }

    private static List<Object> enqueueKeys(RedisKeys k, Message m) {
        return m.isTracked() ? List.of(k.stream(), k.job(m.id())) : List.of(k.stream());
    }

    // ---- fetch ---------------------------------------------------------------------------

    /**
     * Up to {@code max} in total: the queues one after the other (starting at a different one each
     * call), each one's levels in one script; when all are empty, one blocking read over every level
     * of one queue, so that a message arriving on any of them ends the wait ({@code COUNT max / levels},
     * at least 1: with fewer free slots than levels, what the read hands out beyond {@code max}, the
     * lowest levels' entries, is given back to its stream).
     */
    List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
        int k = queues.size();
        int first = Math.floorMod(rotation.getAndIncrement(), k);
        List<Delivery> all = new ArrayList<>();
        // A queue whose read fails is left out of this fetch, not the others: what they handed out
        // is pending to this consumer already, and only the reply delivers it.
        List<BrokerException> failures = new ArrayList<>();
        boolean[] failed = new boolean[k];
        // Each queue its share first, then the rest to those that had more; the next fetch starts
        // after the last queue served, so backed-up queues take turns whatever empty queues sit
        // between them in the list (starting after a fixed rotation would favour the queue that
        // follows empty ones).
        int perQueue = Math.max(1, (max + k - 1) / k);
        boolean[] full = new boolean[k];
        int lastServed = -1;
        for (int i = 0; i < k && all.size() < max; i++) {
            int q = (first + i) % k;
            int ask = Math.min(perQueue, max - all.size());
            List<Delivery> got;
            try {
                got = readLevels(queues.get(q), consumer, ask);
            } catch (BrokerException e) {
                if (RedisContext.serverUnreachable(e) && all.isEmpty()) {
                    throw e; // no queue would answer: the worker's outage handling applies, not k waits
                }
                failed[q] = true;
                failures.add(e);
                fetchFailures.failed(queues.get(q), e);
                continue;
            }
            all.addAll(got);
            full[q] = got.size() == ask;
            if (!got.isEmpty()) {
                lastServed = q;
            }
        }
        for (int i = 0; i < k && all.size() < max; i++) {
            int q = (first + i) % k;
            if (full[q]) {
                try {
                    all.addAll(readLevels(queues.get(q), consumer, max - all.size()));
                } catch (BrokerException e) {
                    fetchFailures.failed(queues.get(q), e);
                }
            }
        }
        if (lastServed >= 0) {
            rotation.set(lastServed + 1);
        }
        if (!all.isEmpty()) {
            return all;
        }
        if (failures.size() == k) {
            throw QueueFetchFailures.first(failures);
        }
        if (wait.toMillis() < k) {
            return all;
        }
        // block on a queue that answered: a broken one would fail the read (and delay the others)
        int blockOn = first;
        for (int i = 0; i < k && (failed[blockOn] || fetchFailures.failing(queues.get(blockOn))); i++) {
            blockOn = (blockOn + 1) % k;
        }
        String queue = queues.get(blockOn);
        int[] lv = levels(queue);
        // Every level at once: a wait on one level at a time left a message (a waiter moved back when
        // a concurrency slot freed) on another level for the rest of that wait, with a slot free.
        List<Delivery> got = block(queue, lv, consumer, Math.max(1, max / lv.length), wait.dividedBy(k));
        return got.size() <= max ? got : keepHighest(queue, consumer, got, max);
    }

    /**
     * The {@code max} deliveries of the highest levels of {@code got} (in their order within a level);
     * the others are given back to their streams ({@link LuaScripts#GIVE_BACK}), or, should that fail,
     * left pending for reclaim.
     */
    private List<Delivery> keepHighest(String queue, String consumer, List<Delivery> got, int max) {
        List<Delivery> byLevel = new ArrayList<>(got);
        byLevel.sort(Comparator.comparingInt((Delivery d) -> levelOf(d.receipt())).reversed());
        Map<Integer, List<Object>> back = new LinkedHashMap<>();
        for (Delivery d : byLevel.subList(max, byLevel.size())) {
            back.computeIfAbsent(levelOf(d.receipt()), p -> new ArrayList<>(List.of(RedisKeys.GROUP, consumer)))
                    .add(entryId(d.receipt()));
        }
        RedisKeys k = redis.keys(queue);
        back.forEach((level, args) -> {
            try {
                redis.eval("give back to level " + level + " of '" + queue + "'", LuaScripts.GIVE_BACK, RScript.ReturnType.LONG,
                        List.of(streamKey(k, level)), args.toArray());
            } catch (BrokerException e) {
                RedisContext.LOG.log(System.Logger.Level.WARNING, "giving back {0} entries of level {1} of ''{2}'' failed ({3}); they"
                        + " are reclaimed after a lease", args.size() - 2, level, queue, e.getMessage());
            }
        });
        return List.copyOf(byLevel.subList(0, max));
    }

    /**
     * Up to {@code max} entries of {@code queue}'s levels: one script says which levels hold entries
     * not handed out yet, in the order to read them ({@link LuaScripts#FETCH_LEVELS}), then plain
     * non-blocking XREADGROUPs read them in that order until {@code max} (in a backlog, one). A
     * level whose read fails is left out of this fetch and reported; the others' entries are delivered.
     */
    private List<Delivery> readLevels(String queue, String consumer, int max) throws InterruptedException {
        int turn = orders.computeIfAbsent(queue, q -> new PriorityFetchOrder(lowerFirstEvery)).nextTurn();
        RedisKeys k = redis.keys(queue);
        List<Object> flat = redis.eval("fetch from '" + queue + "'", LuaScripts.FETCH_LEVELS, RScript.ReturnType.LIST,
                List.of(k.stream()), RedisKeys.GROUP, consumer, Integer.toString(turn));
        int m = Math.toIntExact(ScriptReplies.toLong(flat.getFirst()));
        int[] read = new int[m];
        for (int j = 0; j < m; j++) {
            read[j] = Math.toIntExact(ScriptReplies.toLong(flat.get(1 + j)));
        }
        levels.put(queue, new Levels(read, System.nanoTime())); // fresh: read in the same script
        String problem = ScriptReplies.replyText(flat.get(1 + m));
        List<Delivery> out = new ArrayList<>();
        for (int i = 2 + m; i < flat.size() && out.size() < max; i++) {
            int level = Math.toIntExact(ScriptReplies.toLong(flat.get(i)));
            String stream = streamKey(k, level);
            Map<String, Map<StreamMessageId, Map<String, Object>>> result;
            try {
                result = RedisFetch.readGroup(redis, java.util.Set.of(stream), consumer, RedisFetch.readArgs(java.util.Set.of(stream),
                        max - out.size()), Duration.ZERO);
            } catch (ExecutionException e) {
                String message = String.valueOf(e.getCause().getMessage());
                if (!RedisFetch.groupVanished(e.getCause()) && !message.contains("WRONGTYPE")) {
                    // not this level's own fault (the connection, a timeout): what the read handed out may be lost,
                    // which the worker's recovery of lost reads handles, as for any failed fetch
                    throw redis.failure("fetch from level " + level + " of '" + queue + "'", e.getCause());
                }
                if (problem.isEmpty()) {
                    problem = stream + ": " + RedissonSetup.rootMessage(e.getCause());
                }
                continue;
            }
            if (result != null) {
                result.values().forEach(entries -> entries.forEach((id, fields) ->
                        out.add(ScriptReplies.fetched(queue, receipt(id.toString(), level), fields, 1))));
            }
        }
        if (problem.isEmpty()) {
            if (out.size() < max) {
                // Every level was read. A filled reply may have stopped before a broken level: taken
                // as "works again", a queue failing on a low level was logged as failing, then as
                // working, on every other fetch while its higher levels were busy.
                fetchFailures.answered(queue);
            }
        } else {
            // the other levels' entries are delivered: report the broken level
            fetchFailures.failed(queue, "a level of the queue cannot be read: " + problem);
        }
        return out;
    }

    /** One blocking XREADGROUP over the streams of {@code lv} of one queue (one slot), up to {@code count} from each. */
    private List<Delivery> block(String queue, int[] lv, String consumer, int count, Duration wait) throws InterruptedException {
        RedisKeys k = redis.keys(queue);
        Map<String, Integer> levelByStream = new LinkedHashMap<>();
        for (int p : lv) {
            levelByStream.put(streamKey(k, p), p);
        }
        Map<String, Map<StreamMessageId, Map<String, Object>>> result;
        try {
            result = RedisFetch.readGroup(redis, levelByStream.keySet(), consumer,
                    RedisFetch.readArgs(levelByStream.keySet(), count), wait);
        } catch (ExecutionException e) {
            if (RedisFetch.groupVanished(e.getCause())) {
                return List.of(); // the next fetch's script creates the group again
            }
            throw new BrokerException("Redis fetch from '" + queue + "' failed: "
                    + RedissonSetup.rootMessage(e.getCause()), e.getCause());
        }
        List<Delivery> deliveries = new ArrayList<>();
        if (result != null) {
            result.forEach((stream, entries) -> {
                int level = levelByStream.getOrDefault(stream, Priority.DEFAULT);
                entries.forEach((id, fields) -> deliveries.add(ScriptReplies.fetched(queue, receipt(id.toString(), level), fields, 1)));
            });
        }
        return deliveries;
    }

    // ---- reclaim, pending, inspection ----------------------------------------------------

    /**
     * {@code Broker.reclaim} over every level of {@code queue} (the default's alone when it has no
     * other), highest first, up to {@code max} in total.
     */
    List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
        // The levels' read is sent again when a connection holds it; the XAUTOCLAIM is not: a try that
        // landed counted a delivery of each entry it claimed.
        return eachLevel(queue, max, resent(), (stream, wanted) -> {
            List<Object> flat = redis.evalEntries("reclaim on queue '" + queue + "'", LuaScripts.RECLAIM, RScript.ReturnType.LIST,
                    List.of(stream), RedisKeys.GROUP, consumer, Long.toString(minIdle.toMillis()), Integer.toString(wanted),
                    reclaimCursors.getOrDefault(stream, "0-0"));
            reclaimCursors.put(stream, ScriptReplies.replyText(flat.getFirst()));
            return ScriptReplies.deliveries(queue, flat, 1);
        });
    }

    /**
     * {@code PendingDeliveries.pendingOf} over every level of {@code queue} (the default's alone when it has no other).
     * Its reads change nothing, so each is sent again when a connection holds it while Redis answers
     * ({@link RedisContext#evalResent}): the worker's search for lost reads must find what they handed out within its lease.
     */
    List<Delivery> pendingOf(String queue, String consumer, int max) {
        return eachLevel(queue, max, resent(), (stream, wanted) -> ScriptReplies.deliveries(queue, redis.evalEntriesResent(
                "pendingOf on queue '" + queue + "'", LuaScripts.PENDING_OF, RScript.ReturnType.LIST, List.of(stream), RedisKeys.GROUP,
                consumer, Integer.toString(wanted)), 0));
    }

    /**
     * What {@code read} (of a level's stream key, up to so many) returns of each level of {@code queue}, highest first;
     * the levels read (when not fresh) through {@code levelReads}.
     */
    private List<Delivery> eachLevel(String queue, int max, Reads levelReads, BiFunction<String, Integer, List<Delivery>> read) {
        RedisKeys k = redis.keys(queue);
        List<Delivery> all = new ArrayList<>();
        for (int p : levels(queue, levelReads)) {
            if (all.size() >= max) {
                break;
            }
            read.apply(streamKey(k, p), max - all.size()).forEach(d -> all.add(withLevel(d, p)));
        }
        return all;
    }

    /**
     * {@code base} (the default stream's counts) with the ready and pending entries of every other
     * level added, read through {@code reads}.
     */
    QueueStats withLevels(String queue, QueueStats base, Reads reads) {
        RedisKeys k = redis.keys(queue);
        long ready = base.ready();
        long pending = base.pending();
        int consumers = base.consumers();
        for (int p : levels(queue, reads)) {
            if (p != Priority.DEFAULT) {
                List<Object> r = reads.list("stats of '" + queue + "'", LuaScripts.STATS,
                        List.of(streamKey(k, p), k.delayed(), k.deadLetters()), RedisKeys.GROUP);
                ready += ScriptReplies.toLong(r.get(0));
                pending += ScriptReplies.toLong(r.get(1));
                consumers = Math.max(consumers, Math.toIntExact(ScriptReplies.toLong(r.get(4))));
            }
        }
        return new QueueStats(queue, ready, pending, base.delayed(), base.deadLetters(), consumers);
    }

    /** {@code Broker.removeSettled} over every level of {@code queue}, the default's included. */
    long removeSettled(String queue) { return eachLevel(queue, "removeSettled", LuaScripts.TRIM_ACKED, RedisKeys.GROUP); }

    /** {@code Broker.removeIdleConsumers} over every level of {@code queue}, the default's included. */
    long removeIdleConsumers(String queue, String consumer, Duration idle) {
        RedisKeys k = redis.keys(queue);
        long n = 0;
        for (int p : levels(queue)) {
            n += ScriptReplies.toLong(redis.eval("removeIdleConsumers of '" + queue + "'", LuaScripts.REMOVE_IDLE_CONSUMERS,
                    RScript.ReturnType.LONG, List.of(streamKey(k, p), k.consumersSeen()), RedisKeys.GROUP,
                    Long.toString(Math.max(1, idle.toMillis())), consumer));
        }
        return n;
    }

    /** {@code Broker.removeConsumer} on every level of {@code queue}: true when removed from any. */
    boolean removeConsumer(String queue, String consumer) {
        RedisKeys k = redis.keys(queue);
        boolean removed = false;
        for (int p : levels(queue)) {
            removed |= ScriptReplies.toLong(redis.eval("removeConsumer of '" + queue + "'", LuaScripts.REMOVE_CONSUMER,
                    RScript.ReturnType.LONG, List.of(streamKey(k, p), k.consumersSeen()), RedisKeys.GROUP, consumer)) > 0;
        }
        return removed;
    }

    private long eachLevel(String queue, String what, String script, Object... args) {
        RedisKeys k = redis.keys(queue);
        long n = 0;
        for (int p : levels(queue)) {
            n += ScriptReplies.toLong(redis.eval(what + " of '" + queue + "'", script, RScript.ReturnType.LONG,
                    List.of(streamKey(k, p)), args));
        }
        return n;
    }
}
