package io.binomic.redis.internal;

import static io.binomic.redis.internal.RedisContext.BULK_CHUNK;
import static io.binomic.redis.internal.RedisContext.SUBMIT_AGAIN;
import static io.binomic.redis.internal.RedisKeys.GROUP;

import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.spi.Message;
import io.binomic.api.Priority;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Activity;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Workflows;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerHealthReport;
import io.binomic.api.spi.DeadLetterStore;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimitReadings;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.Pausing;
import io.binomic.api.spi.QueueNames;
import io.binomic.api.spi.PendingDeliveries;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.SettledCleanup;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.UniqueSubmits;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.redisson.Redisson;
import org.redisson.api.BatchOptions;
import org.redisson.api.BatchResult;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RedissonClient;
import org.redisson.api.stream.StreamAddArgs;
import org.redisson.client.RedisReconnectedException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.codec.ByteArrayCodec;
import org.redisson.client.codec.StringCodec;

/**
 * The Redis Streams broker. Layout per queue (see {@link RedisKeys}): a stream read through the
 * consumer group {@code binomic}, a sorted set of delayed messages, a dead-letter stream and one
 * string per periodic job. Every state change that must be atomic is one Lua script
 * ({@link LuaScripts}); the rest are single commands or pipelines, so the round trips per message
 * stay at: enqueue 1 (bulk: 1 per 1000), fetch 1 per batch ({@link RedisFetch}), settle 1 per batch
 * (acks, retries and dead letters together: {@link RedisSettle}). This class moves messages; each
 * capability is a class of its own sharing the broker's {@link RedisContext} ({@link #capability}).
 */
final class RedisBroker implements Broker {
    private static final System.Logger LOG = System.getLogger(RedisBroker.class.getName());
    private static final int BULK_IN_FLIGHT = 2;

    private final RedisContext redis;
    /** Priority levels other than the default: extra streams of a queue, used only when a message has such a priority. */
    private final RedisPriorities priorities;
    private final RedisFetch fetch;
    private final RedisSettle settle;
    /** The bookkeeping of batches on a Cluster; null on a single node. */
    private final ClusterBatches clusterBatches;
    /** The bookkeeping of workflows on a Cluster; null on a single node. */
    private final ClusterWorkflows clusterWorkflows;
    /** What {@link #capability} answers, by type: built once, so the answer never changes while the broker is open. */
    private final Map<Class<?>, Object> capabilities;

    RedisBroker(BrokerConfig config) {
        this.redis = new RedisContext(config);
        QueueFetchFailures fetchFailures = new QueueFetchFailures();
        this.priorities = new RedisPriorities(redis, fetchFailures, Priority.fairness(config));
        this.fetch = new RedisFetch(redis, priorities, fetchFailures);
        // the scripts of a single node's batches and workflows reach keys of several hash tags; a Cluster's
        // keep to one slot per step (ClusterBatches, ClusterWorkflows)
        boolean batches = !redis.setup.redisson().isClusterConfig();
        this.clusterBatches = batches ? null : new ClusterBatches(redis);
        this.clusterWorkflows = batches ? null : new ClusterWorkflows(redis);
        this.settle = new RedisSettle(redis, priorities, batches, clusterBatches, clusterWorkflows);
        RedisFlowLimits flowLimits = new RedisFlowLimits(redis);
        Map<Class<?>, Object> offered = new HashMap<>(Map.of(JobStore.class, new RedisJobStore(redis), DeadLetterStore.class,
                new RedisDeadLetters(redis), FlowLimits.class, flowLimits, UniqueSubmits.class,
                new RedisUniqueSubmits(redis), Pausing.class, new RedisPausing(redis), Partitioning.class, new RedisPartitioning(redis),
                Activity.class, new RedisActivity(redis), PendingDeliveries.class, fetch, SettledCleanup.class, settle,
                BrokerHealthReport.class, redis.evictionPolicy));
        offered.put(FlowLimitReadings.class, flowLimits);
        offered.put(QueueNames.class, new RedisQueueNames(redis));
        offered.put(Batches.class, new RedisBatches(redis, clusterBatches));
        offered.put(Workflows.class, new RedisWorkflows(redis, clusterWorkflows));
        this.capabilities = Map.copyOf(offered);
    }

    /** The connection, keys and plumbing this broker's parts share; what its {@link RedisScheduler} writes through. */
    RedisContext redis() { return redis; }

    /** This broker (as {@link Broker} or {@link RedisBroker}), or the object serving capability {@code type}. */
    @Override
    public <T> Optional<T> capability(Class<T> type) {
        return Optional.ofNullable(type.isInstance(this) ? this : capabilities.get(type)).map(type::cast);
    }

    // ---- lifecycle -------------------------------------------------------------------------

    @Override
    public synchronized void start(List<String> queues) {
        redis.checkStartable();
        RedissonSetup setup = redis.setup;
        RedissonClient created;
        try {
            setup.preflight().run();
            created = Redisson.create(setup.redisson());
        } catch (RuntimeException e) {
            throw setup.startFailure(e);
        }
        try {
            // The first real commands: a server that accepted the connection but refuses us
            // (NOAUTH, NOPERM, wrong database) fails here, still inside start().
            RuntimeException refused = null;
            int refusedQueues = 0;
            for (String queue : queues) {
                try {
                    redis.createGroup(created, queue);
                } catch (RuntimeException e) {
                    if (!String.valueOf(e.getMessage()).contains("WRONGTYPE")) {
                        throw e;
                    }
                    // One queue's key holding something else must not keep the others from starting
                    // (under a master, every worker would fail to start): fetching isolates it, and
                    // once the key is repaired the group is created on the first read.
                    refused = refused == null ? e : refused;
                    refusedQueues++;
                    LOG.log(System.Logger.Level.ERROR, "queue ''{0}'' cannot be set up: its stream key {1} holds another type ({2});"
                            + " the other queues start; check it with TYPE, then delete or rename it", queue, redis.keys(queue).stream(),
                            RedissonSetup.rootMessage(e));
                }
            }
            if (refused != null && refusedQueues == queues.size()) {
                throw refused; // no queue at all: fail the start, saying why
            }
        } catch (RuntimeException e) {
            created.shutdown(0, 2, TimeUnit.SECONDS);
            // connected and authenticated, but the ACL user may not create a queue's stream and group
            throw PermissionReplies.isRefused(e) ? redis.failure("the start (creating the stream and group of queues " + queues + ")", e)
                    : setup.startFailure(e);
        }
        try {
            redis.evictionPolicy.atStart(created, setup.redisson());
        } catch (RuntimeException e) {
            created.shutdown(0, 2, TimeUnit.SECONDS);
            throw e;
        }
        redis.loadScripts(created);
        redis.connected(created);
        LOG.log(System.Logger.Level.DEBUG, "Redis broker connected to {0}, queues {1}", setup.target(), queues);
    }

    @Override
    public void close() {
        RedissonClient c;
        synchronized (this) {
            c = redis.disconnect();
        }
        if (c != null) {
            c.shutdown(0, 5, TimeUnit.SECONDS);
        }
    }

    // ---- enqueue -----------------------------------------------------------------------------

    @Override
    public void enqueue(Message message) {
        redis.checkSize(message);
        if (message.priority() != Priority.DEFAULT) {
            priorities.enqueue(message);
            return;
        }
        if (message.isTracked()) {
            RedisKeys k = redis.keys(message.queue());
            redis.writeOnce.sendScript("enqueue on queue '" + message.queue() + "'",
                    WriteOnce.Effect.enqueue("message id " + message.id()), LuaScripts.ENQUEUE_TRACKED, RScript.ReturnType.LONG,
                    List.of(k.stream(), k.job(message.id())), enqueueArguments(message));
            return;
        }
        StreamAddArgs<byte[], byte[]> entry = StreamAddArgs.entries(StreamFields.encodeBytes(message));
        String stream = redis.keys(message.queue()).stream();
        redis.writeOnce.send("enqueue on queue '" + message.queue() + "'", WriteOnce.Effect.enqueue("message id " + message.id()),
                batch -> batch.<byte[], byte[]>getStream(stream, ByteArrayCodec.INSTANCE).addAsync(entry),
                timeout -> redis.client().<byte[], byte[]>getStream(WriteOnce.once(stream, ByteArrayCodec.INSTANCE, timeout))
                        .addAsync(entry));
    }

    /**
     * Pipelines XADDs in chunks of {@value RedisContext#BULK_CHUNK}, with two chunks in flight. Not MULTI/EXEC:
     * atomicity across messages buys nothing here and costs 3.6x the Redis CPU. With
     * {@code wait.replicas}, a chunk is one script per queue ({@link LuaScripts#ENQUEUE_ALL}) and its
     * WAIT ({@link RedisContext#writeOptions}): on a Cluster (one queue a call) a redirect moves the
     * whole chunk and its WAIT, never a part; a chunk whose primary was replaced under it is sent
     * again whole ({@link #resentIfPrimaryReplaced}), and the script's marker makes a resend of a chunk that ran
     * enqueue nothing. Without it, Redisson does not retry a chunk
     * ({@link RedisContext#enqueueAllOptions}): each message reaches Redis at most once.
     */
    @Override
    public void enqueueAll(List<Message> messages) {
        messages.forEach(redis::checkSize);
        if (ClusterWrites.splitByQueue(redis) && ClusterWrites.severalQueues(messages, Message::queue)) {
            ClusterWrites.enqueueByQueue(messages, this::enqueueAll);
            return;
        }
        // Never skipResult: Redis then sends no reply, so a refused XADD (out of memory, wrong type)
        // would be lost without a word. The replies cost some throughput; a silent loss costs more.
        BatchOptions options = redis.enqueueAllOptions();
        Deque<Chunk> inFlight = new ArrayDeque<>();
        redis.call("enqueueAll", () -> {
            for (int from = 0; from < messages.size(); from += BULK_CHUNK) {
                List<Message> chunk = messages.subList(from, Math.min(messages.size(), from + BULK_CHUNK));
                Consumer<RBatch> commands = redis.replicaWait.on() ? batch -> addByQueue(batch, chunk)
                        : batch -> chunk.forEach(m -> add(batch, m));
                String what = "enqueueAll (messages " + from + " to " + (from + chunk.size()) + " of " + messages.size() + ")";
                RBatch batch = redis.client().createBatch(options);
                commands.accept(batch);
                CompletableFuture<? extends BatchResult<?>> reply = batch.executeAsync().toCompletableFuture();
                if (redis.replicaWait.on()) {
                    reply = reply.thenApply(r -> redis.confirmed(what, SUBMIT_AGAIN, r));
                }
                inFlight.add(new Chunk(what, from, messages.size(), commands, reply));
                if (inFlight.size() >= BULK_IN_FLIGHT) {
                    resentIfPrimaryReplaced(inFlight.poll());
                }
            }
            inFlight.forEach(this::resentIfPrimaryReplaced);
            return null;
        });
    }

    /**
     * A chunk of {@link #enqueueAll} sent, from message {@code from} of {@code total}, what its pipeline
     * holds (to send it again) and its reply.
     */
    private record Chunk(String what, int from, int total, Consumer<RBatch> commands, CompletableFuture<?> reply) { }

    /**
     * Waits for the chunk's reply. When it waits for replicas, and its primary was replaced under it
     * ({@link RedisContext#primaryReplaced}) or Redis did not answer it, nothing of it is confirmed:
     * it is sent again whole, as a producer's write (Redisson, whose retries are off for it, would
     * have resent only its failed commands). A chunk that did land on the primary that survives finds
     * its marker there and enqueues nothing again ({@link LuaScripts#ENQUEUE_ALL}).
     */
    private void resentIfPrimaryReplaced(Chunk chunk) {
        try {
            chunk.reply().join();
        } catch (CompletionException e) {
            if (!redis.replicaWait.on()) {
                throw RedisContext.serverUnreachable(e) || RedisContext.causedBy(e, RedisReconnectedException.class)
                        ? notAllEnqueued(chunk, e) : e;
            }
            if (!(RedisContext.primaryReplaced(e) || RedisContext.serverUnreachable(e))) {
                throw e;
            }
            RedisContext.LOG.log(System.Logger.Level.WARNING, "Redis {0} was not confirmed ({1}); sending it again", chunk.what(),
                    RedissonSetup.rootMessage(e));
            redis.producerPipeline(chunk.what(), chunk.commands());
        }
    }

    /**
     * The failure of {@link #enqueueAll} when Redis did not answer {@code chunk}: which messages are
     * enqueued, which may be, and which are not. {@value #BULK_IN_FLIGHT} chunks are in flight, so those after it may
     * have been sent too.
     */
    private BrokerException notAllEnqueued(Chunk chunk, CompletionException e) {
        int after = Math.min(chunk.total(), chunk.from() + BULK_IN_FLIGHT * BULK_CHUNK);
        // Redisson's timeout text advises more threads or a longer timeout, which no outage needs: the bound is said instead.
        String why = RedisContext.causedBy(e, RedisTimeoutException.class)
                ? "within " + redis.config.commandTimeout().toMillis() + " ms (BrokerConfig.commandTimeout)"
                : "(" + RedissonSetup.rootMessage(e) + ")";
        return new BrokerException("Redis at " + redis.setup.target() + " did not answer the " + chunk.what() + " "
                + why + ": Redis is stopped, frozen or unreachable. The messages before " + chunk.from()
                + " are enqueued; those from " + chunk.from() + " to " + after + " may have been, each at most once, and none is"
                + " sent again, by this call or later; the rest were not enqueued; " + RedisContext.RESUBMIT, e.getCause());
    }

    /** Adds the enqueue of {@code messages} to {@code batch}: one {@link LuaScripts#ENQUEUE_ALL} per queue. */
    private void addByQueue(RBatch batch, List<Message> messages) {
        Map<String, List<Message>> byQueue = new LinkedHashMap<>();
        messages.forEach(m -> byQueue.computeIfAbsent(m.queue(), q -> new ArrayList<>()).add(m));
        byQueue.forEach((queue, list) -> {
            RedisKeys k = redis.keys(queue);
            List<Object> keys = new ArrayList<>(List.of(k.stream(), k.enqueued(list.getFirst().id())));
            List<Object> args = new ArrayList<>();
            args.add(Long.toString(enqueuedMarkerMillis()));
            for (Message m : list) {
                if (m.isTracked()) {
                    keys.add(k.job(m.id()));
                }
                Map<String, String> fields = StreamFields.encode(m);
                args.addAll(List.of(Integer.toString(m.priority()), m.task(), Long.toString(System.currentTimeMillis()),
                        m.isTracked() ? m.trackForMillis() : "", Integer.toString(2 * fields.size())));
                ScriptReplies.addFields(args, fields);
                if (m.priority() != Priority.DEFAULT) {
                    priorities.noteLevel(queue, m.priority());
                }
            }
            batch.getScript(StringCodec.INSTANCE).evalAsync(k.stream(), RScript.Mode.READ_WRITE, LuaScripts.ENQUEUE_ALL,
                    RScript.ReturnType.LONG, keys, args.toArray());
        });
    }

    /**
     * How long the marker of an {@link LuaScripts#ENQUEUE_ALL} call lives: past the last resend of the call, which
     * comes at most one reply timeout ({@link RedisContext#writeOptions}) plus one producer bound after its first
     * send, with as much again to spare.
     */
    private long enqueuedMarkerMillis() {
        return redis.producerBound().multipliedBy(4).toMillis();
    }

    /** Adds the enqueue of {@code m} to {@code batch}: an XADD, or the script of a tracked message or a priority level. */
    private void add(RBatch batch, Message m) {
        if (m.priority() != Priority.DEFAULT) {
            priorities.enqueue(batch, m);
            return;
        }
        if (m.isTracked()) {
            RedisKeys k = redis.keys(m.queue());
            batch.getScript(StringCodec.INSTANCE).evalAsync(k.stream(), RScript.Mode.READ_WRITE, LuaScripts.ENQUEUE_TRACKED,
                    RScript.ReturnType.LONG, List.of(k.stream(), k.job(m.id())), enqueueArguments(m));
            return;
        }
        batch.<byte[], byte[]>getStream(redis.keys(m.queue()).stream(), ByteArrayCodec.INSTANCE)
                .addAsync(StreamAddArgs.entries(StreamFields.encodeBytes(m)));
    }

    // XADDs send the fields as UTF-8 bytes (StreamFields.encodeBytes) with ByteArrayCodec. StringCodec
    // takes a pooled direct buffer from Netty's allocator for every argument and writes the string
    // into it; an XADD of a message has 14 arguments, and in a JFR profile of submitAll that
    // allocator alone took ~20% of the client's CPU. ByteArrayCodec wraps the array instead.

    /** ARGV of {@link LuaScripts#ENQUEUE_TRACKED}, after {@code first} ({@link LuaScripts#ENQUEUE_AT_LEVEL} takes the priority first). */
    static Object[] enqueueArguments(Message m, Object... first) {
        List<Object> args = new ArrayList<>(Arrays.asList(first));
        args.add(m.task());
        args.add(Long.toString(System.currentTimeMillis()));
        args.add(m.isTracked() ? m.trackForMillis() : "");
        ScriptReplies.addFields(args, StreamFields.encode(m));
        return args.toArray();
    }

    // ---- fetch, settle, leases -----------------------------------------------------------

    @Override
    public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
        return fetch.fetch(queues, consumer, max, wait);
    }

    @Override
    public SettleReport settle(String consumer, List<Settlement> settlements) {
        return settle.settle(consumer, settlements, Map.of());
    }

    @Override
    public SettleReport settle(String consumer, List<Settlement> settlements, Map<String, Integer> handOff) {
        return settle.settle(consumer, settlements, handOff);
    }

    @Override
    public List<Delivery> renewLeasesReportingLost(String consumer, List<Delivery> inFlight) {
        // Sorted: the failure of a broken queue's renewal then reads the same each time, and is logged once.
        Map<String, List<Object>> argsByQueue = new TreeMap<>();
        Map<String, Map<String, Delivery>> heldByQueue = new HashMap<>();
        for (Delivery d : inFlight) {
            String stream = RedisPriorities.streamOf(d);
            String entryId = RedisPriorities.entryId(d.receipt());
            List<Object> args = argsByQueue.computeIfAbsent(stream, q -> new ArrayList<>(List.of(GROUP, consumer)));
            args.add(entryId);
            args.add(Integer.toString(d.deliveryCount()));
            heldByQueue.computeIfAbsent(stream, q -> new HashMap<>()).put(entryId, d);
        }
        if (argsByQueue.isEmpty()) {
            return List.of();
        }
        // One script per queue (keys of one hash tag each), all queues in one pipeline: one round trip.
        List<?> replies = redis.pipeline("renewLeases on queues " + argsByQueue.keySet(), batch -> argsByQueue.forEach((queue, args) ->
                batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, LuaScripts.RENEW_LEASES, RScript.ReturnType.LIST,
                        List.of(RedisPriorities.streamKey(redis.keys(RedisPriorities.queueOf(queue)), queue)), args.toArray())));
        List<Delivery> lost = new ArrayList<>();
        int i = 0;
        for (String stream : argsByQueue.keySet()) {
            if (replies.get(i++) instanceof List<?> ids) {
                for (Object id : ids) {
                    Delivery d = heldByQueue.get(stream).get(String.valueOf(id));
                    if (d != null) {
                        lost.add(d);
                    }
                }
            }
        }
        return lost;
    }

    /** Every level of the queue ({@link RedisPriorities#reclaim}); one script when it has only the default. */
    @Override
    public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
        if (clusterBatches != null) {
            // what a worker that died mid-way left of a batch's or a workflow's bookkeeping
            clusterBatches.sweep(queue);
            clusterWorkflows.sweep(queue);
        }
        return max < 1 ? List.of() : priorities.reclaim(queue, consumer, minIdle, max);
    }

    // ---- inspection ----------------------------------------------------------------------

    @Override
    public QueueStats stats(String queue) {
        return stats(queue, priorities.retried());
    }

    /**
     * Each of the reads {@link #stats} makes (its levels, when not fresh, and each level's counts)
     * sent once, all within {@code bound} (and the command timeout, if shorter).
     */
    @Override
    public QueueStats statsOnce(String queue, Duration bound) {
        Duration within = bound.compareTo(redis.config.commandTimeout()) < 0 ? bound : redis.config.commandTimeout();
        long deadline = System.nanoTime() + within.toNanos();
        return stats(queue, (what, script, keys, args) -> redis.evalOnce(what, deadline, within, script, RScript.ReturnType.LIST,
                keys, args));
    }

    private QueueStats stats(String queue, RedisPriorities.Reads reads) {
        RedisKeys k = redis.keys(queue);
        List<Object> r = reads.list("stats of '" + queue + "'", LuaScripts.STATS, List.of(k.stream(), k.delayed(), k.deadLetters()),
                GROUP);
        return priorities.withLevels(queue, new QueueStats(queue, ScriptReplies.toLong(r.get(0)), ScriptReplies.toLong(r.get(1)),
                ScriptReplies.toLong(r.get(2)), ScriptReplies.toLong(r.get(3)), Math.toIntExact(ScriptReplies.toLong(r.get(4)))), reads);
    }

    @Override
    public int removeIdleConsumers(String queue, String consumer, Duration idle) {
        return Math.toIntExact(priorities.removeIdleConsumers(queue, consumer, idle));
    }

    @Override
    public boolean removeConsumer(String queue, String consumer) {
        boolean removed = priorities.removeConsumer(queue, consumer);
        fetch.forgetConsumer(queue, consumer);
        return removed;
    }

    @Override
    public boolean hasBeenRead(String queue) {
        return ScriptReplies.toLong(redis.eval("hasBeenRead of '" + queue + "'", LuaScripts.GROUP_EXISTS, RScript.ReturnType.LONG,
                List.of(redis.keys(queue).stream()), GROUP)) > 0;
    }

    /** What errors name this broker by: its URL, password redacted. */
    @Override
    public String toString() { return "RedisBroker[" + redis.config.redactedUrl() + "]"; }
}
