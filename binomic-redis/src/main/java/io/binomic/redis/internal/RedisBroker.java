package io.binomic.redis.internal;

import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.DeadLetter;
import io.binomic.api.JobHandle;
import io.binomic.api.NotReplicatedException;
import io.binomic.api.PayloadTooLargeException;
import io.binomic.api.Priority;
import io.binomic.api.QueueLimits;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.api.spi.Admission;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerHealthReport;
import io.binomic.api.spi.DeadLetterStore;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.PauseState;
import io.binomic.api.spi.Pausing;
import io.binomic.api.spi.PendingDeliveries;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.SettledCleanup;
import io.binomic.api.spi.Settlement;
import io.binomic.api.spi.UniqueSubmits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.redisson.Redisson;
import org.redisson.api.BatchOptions;
import org.redisson.api.BatchResult;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RStream;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.api.stream.StreamAddArgs;
import org.redisson.api.stream.StreamCreateGroupArgs;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.api.stream.StreamMultiReadGroupArgs;
import org.redisson.api.stream.StreamRangeArgs;
import org.redisson.client.RedisConnectionException;
import org.redisson.client.RedisNoScriptException;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.codec.ByteArrayCodec;
import org.redisson.client.codec.Codec;
import org.redisson.client.codec.StringCodec;

/**
 * The Redis Streams broker. Layout per queue (see {@link RedisKeys}): a stream read through the
 * consumer group {@code binomic}, a sorted set of delayed messages, a dead-letter stream and one
 * string per periodic job. Every state change that must be atomic is one Lua script
 * ({@link LuaScripts}); the rest are single commands or pipelines, so the round trips per message
 * stay at: enqueue 1 (bulk: 1 per 1000), fetch 1 per batch, settle 1 per batch (acks, retries and
 * dead letters together).
 *
 * <p>Acked entries are not deleted one by one: the settle pipeline trims them in bulk, at most five
 * times a second per queue, with {@code XTRIM MINID} below the group's oldest pending and last-delivered
 * entries. The stream is never trimmed by length, because a stream trimmed past its backlog
 * silently loses messages.
 */
final class RedisBroker implements Broker, JobStore, DeadLetterStore, FlowLimits, UniqueSubmits, Pausing, Partitioning, Activity,
        PendingDeliveries, SettledCleanup, BrokerHealthReport {
    private static final System.Logger LOG = System.getLogger(RedisBroker.class.getName());
    private static final String GROUP = RedisKeys.GROUP;
    static final int BULK_CHUNK = 1000;
    private static final int BULK_IN_FLIGHT = 2;
    private static final int REPLAY_CHUNK = 500;
    private static final int PRODUCER_TRIES = 3;
    private static final Duration TRIM_EVERY = Duration.ofMillis(200);

    private final BrokerConfig config;
    final RedissonSetup setup;
    /** Opt-in: replicas that must confirm each enqueue and settlement ({@code WAIT}); off by default. */
    final RedissonSetup.ReplicaWait replicaWait;
    /** "queue consumer" pairs registered with XGROUP CREATECONSUMER by this broker. */
    private final Set<String> registeredConsumers = ConcurrentHashMap.newKeySet();
    /** Where each queue's XAUTOCLAIM scan stopped, so the next reclaim goes on from there. */
    private final Map<String, String> reclaimCursors = new ConcurrentHashMap<>();
    /** When each queue's acknowledged entries were last trimmed (System.nanoTime). */
    private final Map<String, Long> lastTrim = new ConcurrentHashMap<>();
    /** Which queue a one-at-a-time fetch starts with, so no queue is always served first. */
    private final AtomicInteger fetchRotation = new AtomicInteger();
    private volatile RedissonClient client;
    private volatile boolean closed;
    /** Priority levels other than the default: extra streams of a queue, used only when a message has such a priority. */
    private final RedisPriorities priorities;
    private final QueueFetchFailures fetchFailures = new QueueFetchFailures();
    private final EvictionPolicyCheck evictionPolicy;

    RedisBroker(BrokerConfig config) {
        this.config = config;
        this.setup = RedissonSetup.of(config);
        this.evictionPolicy = new EvictionPolicyCheck(config, setup.target());
        this.replicaWait = setup.replicaWait();
        this.priorities = new RedisPriorities(this, Priority.fairness(config));
    }

    // ---- lifecycle -------------------------------------------------------------------------

    @Override
    public synchronized void start(List<String> queues) {
        if (client != null || closed) {
            throw new IllegalStateException(closed ? "the Redis broker is closed" : "the Redis broker is already started");
        }
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
                    createGroup(created, queue);
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
                            + " the other queues start; check it with TYPE, then delete or rename it", queue, keys(queue).stream(),
                            RedissonSetup.rootMessage(e));
                }
            }
            if (refused != null && refusedQueues == queues.size()) {
                throw refused; // no queue at all: fail the start, saying why
            }
        } catch (RuntimeException e) {
            created.shutdown(0, 2, TimeUnit.SECONDS);
            throw setup.startFailure(e);
        }
        try {
            evictionPolicy.atStart(created, setup.redisson());
        } catch (RuntimeException e) {
            created.shutdown(0, 2, TimeUnit.SECONDS);
            throw e;
        }
        client = created;
        LOG.log(System.Logger.Level.DEBUG, "Redis broker connected to {0}, queues {1}", setup.target(), queues);
    }

    /** Creates the stream and the group reading it from the start (so nothing enqueued earlier is skipped). */
    private void createGroup(RedissonClient redisson, String queue) {
        RStream<String, String> stream = redisson.getStream(keys(queue).stream(), StringCodec.INSTANCE);
        try {
            stream.createGroup(StreamCreateGroupArgs.name(GROUP).id(StreamMessageId.ALL).makeStream());
        } catch (RuntimeException e) {
            if (!String.valueOf(e.getMessage()).contains("BUSYGROUP")) {
                throw e;
            }
        }
    }

    @Override
    public void close() {
        RedissonClient c;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            c = client;
            client = null;
        }
        if (c != null) {
            c.shutdown(0, 5, TimeUnit.SECONDS);
        }
    }

    RedissonClient client() {
        RedissonClient c = client;
        if (c == null) {
            throw new IllegalStateException(closed ? "the Redis broker is closed" : "the Redis broker is not started: call start() first");
        }
        return c;
    }

    RedisKeys keys(String queue) {
        return new RedisKeys(config.keyPrefix(), queue);
    }

    /** The {@code maxmemory-policy} of every primary, as last read (see {@link EvictionPolicyCheck}). */
    @Override
    public List<ServerSetting> serverSettings() {
        return evictionPolicy.settings();
    }

    // ---- enqueue -----------------------------------------------------------------------------

    @Override
    public void enqueue(Message message) {
        checkSize(message);
        if (message.priority() != Priority.DEFAULT) {
            priorities.enqueue(message);
            return;
        }
        if (message.isTracked()) {
            RedisKeys k = keys(message.queue());
            writeScriptRetryingBrokenConnections("enqueue on queue '" + message.queue() + "'", LuaScripts.ENQUEUE_TRACKED,
                    List.of(k.stream(), k.job(message.id())), trackedEnqueueArguments(message));
            return;
        }
        Map<byte[], byte[]> fields = StreamFields.encodeBytes(message);
        String what = "enqueue on queue '" + message.queue() + "'";
        if (replicaWait.on()) {
            callRetryingBrokenConnections(what, () -> {
                RBatch batch = client().createBatch(writeOptions());
                batch.<byte[], byte[]>getStream(keys(message.queue()).stream(), ByteArrayCodec.INSTANCE)
                        .addAsync(StreamAddArgs.entries(fields));
                return confirmed(what, SUBMIT_AGAIN, batch.execute());
            });
            return;
        }
        callRetryingBrokenConnections(what, () -> client().<byte[], byte[]>getStream(
                keys(message.queue()).stream(), ByteArrayCodec.INSTANCE).add(StreamAddArgs.entries(fields)));
    }

    /**
     * Pipelines XADDs in chunks of {@value #BULK_CHUNK}, with two chunks in flight. Not MULTI/EXEC:
     * atomicity across messages buys nothing here and costs 3.6x the Redis CPU.
     */
    @Override
    public void enqueueAll(List<Message> messages) {
        messages.forEach(this::checkSize);
        if (ClusterWrites.splitByQueue(this) && ClusterWrites.severalQueues(messages, Message::queue)) {
            ClusterWrites.enqueueByQueue(messages, this::enqueueAll);
            return;
        }
        // Never skipResult: Redis then sends no reply, so a refused XADD (out of memory, wrong type)
        // would be lost without a word. The replies cost some throughput; a silent loss costs more.
        BatchOptions options = writeOptions();
        Deque<CompletableFuture<?>> inFlight = new ArrayDeque<>();
        call("enqueueAll", () -> {
            for (int from = 0; from < messages.size(); from += BULK_CHUNK) {
                RBatch batch = client().createBatch(options);
                for (Message m : messages.subList(from, Math.min(messages.size(), from + BULK_CHUNK))) {
                    if (m.priority() != Priority.DEFAULT) {
                        priorities.enqueue(batch, m);
                        continue;
                    }
                    if (m.isTracked()) {
                        RedisKeys k = keys(m.queue());
                        batch.getScript(StringCodec.INSTANCE).evalAsync(k.stream(), RScript.Mode.READ_WRITE, LuaScripts.ENQUEUE_TRACKED,
                                RScript.ReturnType.LONG, List.of(k.stream(), k.job(m.id())), trackedEnqueueArguments(m));
                        continue;
                    }
                    batch.<byte[], byte[]>getStream(keys(m.queue()).stream(), ByteArrayCodec.INSTANCE)
                            .addAsync(StreamAddArgs.entries(StreamFields.encodeBytes(m)));
                }
                CompletableFuture<? extends BatchResult<?>> chunk = batch.executeAsync().toCompletableFuture();
                if (replicaWait.on()) {
                    int first = from;
                    chunk = chunk.thenApply(r -> confirmed("enqueueAll (messages " + first + " to "
                            + Math.min(messages.size(), first + BULK_CHUNK) + " of " + messages.size() + ")", SUBMIT_AGAIN, r));
                }
                inFlight.add(chunk);
                if (inFlight.size() >= BULK_IN_FLIGHT) {
                    inFlight.poll().join();
                }
            }
            inFlight.forEach(CompletableFuture::join);
            return null;
        });
    }

    // XADDs send the fields as UTF-8 bytes (StreamFields.encodeBytes) with ByteArrayCodec. StringCodec
    // takes a pooled direct buffer from Netty's allocator for every argument and writes the string
    // into it; an XADD of a message has 14 arguments, and in a JFR profile of submitAll that
    // allocator alone took ~20% of the client's CPU. ByteArrayCodec wraps the array instead.

    private static Object[] trackedEnqueueArguments(Message m) {
        List<Object> args = new ArrayList<>();
        args.add(m.task());
        args.add(Long.toString(System.currentTimeMillis()));
        args.add(m.trackForMillis());
        StreamFields.encode(m).forEach((name, value) -> {
            args.add(name);
            args.add(value);
        });
        return args.toArray();
    }

    /**
     * A producer's scripted write (a tracked job's enqueue or schedule, with its record): tried
     * again when the connection fails under it, like a plain XADD, and ending in WAIT when
     * {@code wait.replicas} asks for it.
     */
    void writeScriptRetryingBrokenConnections(String what, String script, List<Object> keys, Object... args) {
        this.<Object>callRetryingBrokenConnections(what, () -> {
            if (!replicaWait.on()) {
                return client().getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_WRITE, script, RScript.ReturnType.LONG, keys, args);
            }
            RBatch batch = client().createBatch(writeOptions());
            batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, script, RScript.ReturnType.LONG, keys, args);
            return confirmed(what, SUBMIT_AGAIN, batch.execute());
        });
    }

    void checkSize(Message message) {
        if (message.payload().length > config.maxPayloadBytes()) {
            throw new PayloadTooLargeException(message.task(), message.payload().length, config.maxPayloadBytes());
        }
    }

    // ---- fetch and settle ------------------------------------------------------------------

    /**
     * Never more than {@code max} in total. {@code XREADGROUP ... COUNT n} over several streams
     * returns up to n entries <em>per stream</em>, so over k queues one read asks for
     * {@code max / k} per stream. When that is zero (fewer free slots than queues), and on Redis
     * Cluster (streams in different slots), the queues are read one at a time, starting at a
     * different queue each call, without blocking; only when all are empty does it block, on one
     * queue for {@code wait / k}, so a message on any queue waits at most that long.
     */
    @Override
    public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
        if (queues.isEmpty() || max < 1) {
            return List.of();
        }
        queues = fetchFailures.readable(queues);
        if (priorities.anyLevels(queues)) {
            return priorities.fetch(queues, consumer, max, wait);
        }
        int k = queues.size();
        if (k == 1) {
            try {
                List<Delivery> got = read(queues, consumer, max, wait);
                fetchFailures.answered(queues.getFirst());
                return got;
            } catch (BrokerException e) {
                if (!serverUnreachable(e)) {
                    fetchFailures.failed(queues.getFirst(), e);
                }
                throw e;
            }
        }
        if (max >= k && !setup.redisson().isClusterConfig()) {
            try {
                List<Delivery> got = read(queues, consumer, max / k, wait);
                queues.forEach(fetchFailures::answered);
                return got;
            } catch (BrokerException e) {
                if (serverUnreachable(e)) {
                    throw e; // no queue would answer: reading them one at a time would only wait k times as long
                }
                // XREADGROUP checks every stream before it reads any: nothing was handed out. Read
                // the queues one at a time below, so the broken one fails alone.
            }
        }
        int first = Math.floorMod(fetchRotation.getAndIncrement(), k);
        List<Delivery> all = new ArrayList<>();
        List<BrokerException> failures = new ArrayList<>();
        int lastServed = -1;
        for (int i = 0; i < k && all.size() < max; i++) {
            String queue = queues.get((first + i) % k);
            List<Delivery> got;
            try {
                got = read(List.of(queue), consumer, max - all.size(), Duration.ZERO);
            } catch (BrokerException e) {
                if (serverUnreachable(e) && all.isEmpty()) {
                    throw e;
                }
                // what the other queues handed out is pending to this consumer already: keep it
                failures.add(e);
                fetchFailures.failed(queue, e);
                continue;
            }
            fetchFailures.answered(queue);
            all.addAll(got);
            if (!got.isEmpty()) {
                lastServed = (first + i) % k;
            }
        }
        if (lastServed >= 0) {
            // the next fetch starts after the queue served last: backed-up queues take turns,
            // whatever empty queues sit between them in the list
            fetchRotation.set(lastServed + 1);
        }
        if (all.isEmpty() && failures.size() == k) {
            throw QueueFetchFailures.first(failures);
        }
        if (all.isEmpty() && wait.toMillis() >= k) {
            int blockOn = first;
            for (int i = 0; i < k && fetchFailures.failing(queues.get(blockOn)); i++) {
                blockOn = (blockOn + 1) % k;
            }
            all.addAll(read(List.of(queues.get(blockOn)), consumer, max, wait.dividedBy(k)));
        }
        return all;
    }

    /**
     * True when {@code e} is Redis not answering (a timeout, a connection refused or lost), not one
     * queue's keys refusing a command: then every queue fails alike, and the worker's own outage
     * handling applies rather than one queue sitting out.
     */
    static boolean serverUnreachable(BrokerException e) {
        return causedBy(e, RedisTimeoutException.class) || causedBy(e, RedisConnectionException.class);
    }

    /** The queues of fetches that fail on their own while the others are read. */
    QueueFetchFailures fetchFailures() {
        return fetchFailures;
    }

    /** One XREADGROUP over the streams of {@code queues}, up to {@code countPerStream} entries from each. */
    private List<Delivery> read(List<String> queues, String consumer, int countPerStream, Duration wait) throws InterruptedException {
        int max = countPerStream;
        registerConsumer(queues, consumer);
        Map<String, String> queueByStream = new LinkedHashMap<>();
        for (String queue : queues) {
            queueByStream.put(keys(queue).stream(), queue);
        }
        List<String> streams = new ArrayList<>(queueByStream.keySet());
        Map<String, StreamMessageId> others = new LinkedHashMap<>();
        streams.subList(1, streams.size()).forEach(s -> others.put(s, StreamMessageId.NEVER_DELIVERED));
        StreamMultiReadGroupArgs args = StreamMultiReadGroupArgs.greaterThan(StreamMessageId.NEVER_DELIVERED, others).count(max);
        if (wait.toMillis() > 0) {
            args = args.timeout(wait); // BLOCK 0 would mean forever: never pass a zero wait.
        }
        RStream<String, Object> first = client().getStream(streams.get(0), entryCodec());
        CompletableFuture<Map<String, Map<StreamMessageId, Map<String, Object>>>> read =
                first.readGroupAsync(GROUP, consumer, args).toCompletableFuture();
        Map<String, Map<StreamMessageId, Map<String, Object>>> result;
        try {
            result = read.get();
        } catch (InterruptedException e) {
            read.cancel(true);
            throw e;
        } catch (ExecutionException e) {
            if (String.valueOf(e.getCause().getMessage()).contains("NOGROUP")) {
                // The stream or group vanished (Redis restarted without persistence, or FLUSHALL):
                // recreate it and let the caller fetch again.
                recreateGroups(queues);
                return List.of();
            }
            throw failure("fetch from " + queues, e.getCause());
        }
        if (result == null || result.isEmpty()) {
            return List.of();
        }
        List<Delivery> deliveries = new ArrayList<>();
        result.forEach((stream, entries) -> {
            String queue = queueByStream.getOrDefault(stream, stream);
            entries.forEach((id, fields) -> deliveries.add(fetched(queue, id.toString(), fields)));
        });
        return deliveries;
    }

    /** The codec of an XREADGROUP whose entries go to {@link #fetched}. */
    static Codec entryCodec() {
        return EntryCodec.INSTANCE;
    }

    /** The delivery of an entry read with {@link #entryCodec()}. */
    static Delivery fetched(String queue, String receipt, Map<String, ?> fields) {
        return fetched(queue, receipt, fields, 1);
    }

    /** {@link #fetched} of an entry handed out {@code deliveryCount} times. */
    @SuppressWarnings("unchecked")
    static Delivery fetched(String queue, String receipt, Map<String, ?> fields, int deliveryCount) {
        return StreamFields.toDeliveryFromBytes(queue, receipt, (Map<String, byte[]>) fields, deliveryCount);
    }

    private void recreateGroups(List<String> queues) {
        LOG.log(System.Logger.Level.WARNING, "consumer group missing on {0} (Redis lost its data?); recreating it", queues);
        for (String queue : queues) {
            registeredConsumers.removeIf(k -> k.startsWith(queue + " "));
            call("recreate the group of '" + queue + "'", () -> {
                createGroup(client(), queue);
                return null;
            });
        }
    }

    /**
     * Redis before 7.2 creates a consumer only when a read returns something; a worker waiting on
     * an empty queue would then be invisible to {@link #stats} and to {@link #removeIdleConsumers}.
     * Registering it explicitly costs one pipelined round trip per queue and consumer, once.
     */
    private void registerConsumer(List<String> queues, String consumer) {
        List<String> missing = queues.stream().filter(q -> !registeredConsumers.contains(q + " " + consumer)).toList();
        if (missing.isEmpty()) {
            return;
        }
        call("register consumer '" + consumer + "'", () -> {
            RBatch batch = client().createBatch(BatchOptions.defaults());
            for (String queue : missing) {
                batch.getStream(keys(queue).stream(), StringCodec.INSTANCE).createConsumerAsync(GROUP, consumer);
            }
            try {
                return batch.execute();
            } catch (RuntimeException e) {
                if (!String.valueOf(e.getMessage()).contains("NOGROUP")) {
                    throw e;
                }
                recreateGroups(missing);
                return null; // the next read creates the consumer; nothing is lost by skipping this once
            }
        });
        missing.forEach(q -> registeredConsumers.add(q + " " + consumer));
    }

    /**
     * Every queue's settlements as one fenced script ({@link LuaScripts#SETTLE}), all queues in one
     * pipeline: one round trip per call, whatever the mix of acks, retries and dead letters. At most
     * once per {@link #TRIM_EVERY} (200 ms) and queue, the same pipeline also trims acknowledged entries
     * ({@link LuaScripts#TRIM_ACKED}), which replaces an XDEL per ack.
     */
    @Override
    public SettleReport settle(String consumer, List<Settlement> settlements) {
        if (settlements.isEmpty()) {
            return SettleReport.ALL_APPLIED;
        }
        if (ClusterWrites.splitByQueue(this) && ClusterWrites.severalQueues(settlements, x -> x.delivery().queue())) {
            return ClusterWrites.settleByQueue(settlements, one -> settle(consumer, one));
        }
        Map<String, List<Settlement>> byQueue = new LinkedHashMap<>();
        for (Settlement s : settlements) {
            if (s instanceof Settlement.RetryLater retry) {
                checkSize(retry.next());
            }
            byQueue.computeIfAbsent(RedisPriorities.streamOf(s.delivery()), q -> new ArrayList<>()).add(s);
        }
        // the script's fence lists runs of consecutive ids (LuaScripts.SETTLE); stable, so a repeated entry keeps its order
        byQueue.values().forEach(list -> list.sort(BY_ENTRY_ID));
        String dlqMaxCount = Integer.toString(config.deadLetterMaxCount());
        String dlqMinId = Long.toString(Instant.now().minus(config.deadLetterMaxAge()).toEpochMilli());
        long now = System.nanoTime();
        Set<String> trimmed = new HashSet<>();
        for (String queue : byQueue.keySet()) {
            Long last = lastTrim.get(queue);
            if (last == null || now - last >= TRIM_EVERY.toNanos()) {
                lastTrim.put(queue, now);
                trimmed.add(queue);
            }
        }
        String what = "settle on queues " + byQueue.keySet();
        List<?> replies = call(what, () -> {
            RBatch batch = client().createBatch(writeOptions());
            byQueue.forEach((queue, list) -> {
                RedisKeys k = keys(RedisPriorities.queueOf(queue));
                List<Object> settleKeys = new ArrayList<>(List.of(RedisPriorities.streamKey(k, queue), k.delayed(), k.deadLetters()));
                Object[] args = settleArguments(consumer, dlqMaxCount, dlqMinId, list, k, settleKeys);
                batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, LuaScripts.SETTLE,
                        RScript.ReturnType.LIST, settleKeys, args);
                if (trimmed.contains(queue)) {
                    batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, LuaScripts.TRIM_ACKED,
                            RScript.ReturnType.LONG, List.of(RedisPriorities.streamKey(k, queue)), GROUP);
                }
            });
            return confirmed(what, SETTLE_AGAIN, batch.execute()).getResponses();
        });
        List<Settlement> reclaimed = new ArrayList<>();
        List<Settlement> notPending = new ArrayList<>();
        int reply = 0;
        for (Map.Entry<String, List<Settlement>> e : byQueue.entrySet()) {
            if (replies.get(reply++) instanceof List<?> positions) {
                for (Object position : positions) {
                    int at = Math.toIntExact(toLong(position));
                    (at > 0 ? reclaimed : notPending).add(e.getValue().get(Math.abs(at) - 1));
                }
            }
            if (trimmed.contains(e.getKey())) {
                reply++;
            }
        }
        return reclaimed.isEmpty() && notPending.isEmpty() ? SettleReport.ALL_APPLIED : new SettleReport(reclaimed, notPending);
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

    private static Object[] settleArguments(String consumer, String dlqMaxCount, String dlqMinId, List<Settlement> settlements,
                                            RedisKeys k, List<Object> keys) {
        List<Object> args = new ArrayList<>(4 + settlements.size() * 3);
        args.add(GROUP);
        args.add(consumer);
        args.add(dlqMaxCount);
        args.add(dlqMinId);
        for (Settlement s : settlements) {
            Delivery d = s.delivery();
            switch (s) {
                case Settlement.Ack ack when d.deliveryCount() == 1 ->
                    // the drain's common case as one argument: the script reads an ack of count 1 from the id alone
                    args.add(RedisPriorities.entryId(d.receipt()));
                case Settlement.Ack ack -> {
                    args.add("A");
                    args.add(RedisPriorities.entryId(d.receipt()));
                    args.add(Integer.toString(d.deliveryCount()));
                }
                case Settlement.RetryLater retry -> {
                    args.add("R");
                    args.add(RedisPriorities.entryId(d.receipt()));
                    args.add(Integer.toString(d.deliveryCount()));
                    args.add(Long.toString(retry.dueAt().toEpochMilli()));
                    args.add(StreamFields.toJson(StreamFields.encode(retry.next())));
                }
                case Settlement.DeadLetter dead -> {
                    Map<String, String> fields = DeadLetterFields.encode(d, dead.failure());
                    args.add("D");
                    args.add(RedisPriorities.entryId(d.receipt()));
                    args.add(Integer.toString(d.deliveryCount()));
                    args.add(Integer.toString(fields.size() * 2));
                    fields.forEach((name, value) -> {
                        args.add(name);
                        args.add(value);
                    });
                }
            }
            if (s.job() != null) {
                keys.add(k.job(s.job().id()));
                args.add("J");
                args.add(Integer.toString(keys.size()));
                addJobArguments(args, s.job(), k);
            }
            RedisFlowControl.addSettleArguments(s, k, keys, args);
        }
        return args.toArray();
    }

    /** A job update as the scripts' {@code apply_job} reads it (lib.lua). */
    private static void addJobArguments(List<Object> args, JobUpdate update, RedisKeys k) {
        args.add(Integer.toString(update.set().size() * 2));
        update.set().forEach((name, value) -> {
            args.add(name);
            args.add(value);
        });
        args.add(Integer.toString(update.delete().size()));
        args.addAll(update.delete());
        args.add(Long.toString(update.expireAfter().toMillis()));
        args.add(k.jobEvents());
        args.add(update.ends() ? "E " + update.id() : "");
    }

    // ---- job records ---------------------------------------------------------------------

    @Override
    public Optional<JobRecord> readJob(String queue, UUID id) {
        Map<String, String> fields = call("readJob " + id + " of '" + queue + "'",
                () -> client().<String, String>getMap(keys(queue).job(id), StringCodec.INSTANCE).readAllMap());
        return fields == null || fields.isEmpty() ? Optional.empty() : Optional.of(new JobRecord(fields));
    }

    @Override
    public Set<UUID> startJobs(List<JobUpdate> starts) {
        if (starts.isEmpty()) {
            return Set.of();
        }
        Map<String, List<JobUpdate>> byQueue = new LinkedHashMap<>();
        starts.forEach(u -> byQueue.computeIfAbsent(u.queue(), q -> new ArrayList<>()).add(u));
        List<?> replies = call("startJobs on queues " + byQueue.keySet(), () -> {
            RBatch batch = client().createBatch(BatchOptions.defaults());
            byQueue.forEach((queue, updates) -> {
                RedisKeys k = keys(queue);
                List<Object> keys = new ArrayList<>();
                List<Object> args = new ArrayList<>();
                for (JobUpdate u : updates) {
                    keys.add(k.job(u.id()));
                    addJobArguments(args, u, k);
                }
                batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, LuaScripts.START_JOBS,
                        RScript.ReturnType.LIST, keys, args.toArray());
            });
            return batch.execute().getResponses();
        });
        Set<UUID> notStarted = new HashSet<>();
        int reply = 0;
        for (List<JobUpdate> updates : byQueue.values()) {
            if (replies.get(reply++) instanceof List<?> positions) {
                for (Object position : positions) {
                    notStarted.add(updates.get(Math.toIntExact(toLong(position)) - 1).id());
                }
            }
        }
        return notStarted;
    }

    @Override
    public void updateRunningJob(JobUpdate update) {
        RedisKeys k = keys(update.queue());
        List<Object> args = new ArrayList<>();
        addJobArguments(args, update, k);
        eval("progress of job " + update.id(), LuaScripts.UPDATE_RUNNING_JOB, RScript.ReturnType.LONG,
                List.of(k.job(update.id())), args.toArray());
    }

    @Override
    public JobHandle.CancelOutcome cancelJob(JobUpdate cancelled) {
        RedisKeys k = keys(cancelled.queue());
        List<Object> args = new ArrayList<>();
        addJobArguments(args, cancelled, k);
        long r = evalWrite("cancel of job " + cancelled.id(), "the cancel is on the primary only; if it fails over first, cancel again",
                LuaScripts.CANCEL_JOB, RScript.ReturnType.LONG, List.of(k.job(cancelled.id())), args.toArray());
        return switch (Math.toIntExact(r)) {
            case 0 -> JobHandle.CancelOutcome.NOT_FOUND;
            case 1 -> JobHandle.CancelOutcome.ALREADY_ENDED;
            case 2 -> JobHandle.CancelOutcome.CANCEL_REQUESTED;
            default -> JobHandle.CancelOutcome.CANCELLED;
        };
    }

    @Override
    public AutoCloseable subscribeJobEvents(String queue, Consumer<JobEvent> listener) {
        RTopic topic = client().getTopic(keys(queue).jobEvents(), StringCodec.INSTANCE);
        int listenerId = call("subscribe to job events of '" + queue + "'", () -> topic.addListener(String.class, (channel, text) -> {
            if (text.length() < 3) {
                return;
            }
            JobEvent.Kind kind = text.charAt(0) == 'C' ? JobEvent.Kind.CANCEL_REQUESTED : JobEvent.Kind.ENDED;
            try {
                listener.accept(new JobEvent(queue, UUID.fromString(text.substring(2)), kind));
            } catch (IllegalArgumentException e) {
                LOG.log(System.Logger.Level.DEBUG, "ignoring job event {0}", text);
            }
        }));
        return () -> topic.removeListener(listenerId);
    }

    // ---- flow limits (rate and concurrency: LuaScripts.ADMIT, released in SETTLE) ------------

    /** How long a message waiting for a concurrency slot stays in the delayed set if no release moves it back first. */
    static final Duration SLOT_WAIT_FALLBACK = Duration.ofSeconds(10);

    /** One {@link LuaScripts#ADMIT} per queue, every queue in one pipeline: one round trip for a whole fetch. */
    @Override
    public List<Admission> admit(String consumer, List<Admission.Request> requests) {
        if (requests.isEmpty()) {
            return List.of();
        }
        Map<String, List<Admission.Request>> byQueue = new LinkedHashMap<>();
        for (var r : requests) {
            // per stream: a priority level's deliveries are pending on its own stream (RedisPriorities)
            byQueue.computeIfAbsent(RedisPriorities.streamOf(r.delivery()), q -> new ArrayList<>()).add(r);
        }
        String what = "admit on queues " + byQueue.keySet().stream().map(RedisPriorities::queueOf).distinct().toList();
        List<?> replies = call(what, () -> {
            RBatch batch = client().createBatch(writeOptions());
            byQueue.forEach((stream, list) -> {
                RedisKeys k = keys(RedisPriorities.queueOf(stream));
                List<Object> keys = new ArrayList<>(List.of(RedisPriorities.streamKey(k, stream), k.delayed(), k.held()));
                List<Object> args = new ArrayList<>(List.of(GROUP, consumer, Long.toString(SLOT_WAIT_FALLBACK.toMillis())));
                for (var r : list) {
                    Delivery d = r.delivery();
                    Message m = d.message().orElseThrow();
                    String attempt = Integer.toString(m.attempt());
                    args.add(RedisPriorities.entryId(d.receipt()));
                    args.add(Integer.toString(d.deliveryCount()));
                    args.add(attempt);
                    args.add(m.isRateAdmitted() ? "1" : "0");
                    args.add(m.isTurn() ? "1" : "0");
                    if (m.isTracked()) {
                        keys.add(k.job(m.id()));
                        args.add(Integer.toString(keys.size()));
                    } else {
                        args.add("0");
                    }
                    args.add(Integer.toString(r.limits().size()));
                    for (var limit : r.limits()) {
                        args.add(limit.kind() == FlowLimit.Kind.RATE ? "r" : "c");
                        args.add(limit.id());
                        args.add(Integer.toString(limit.permits()));
                        args.add(Long.toString(limit.intervalMillis()));
                        args.add(Integer.toString(limit.burst()));
                    }
                }
                batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, LuaScripts.ADMIT, RScript.ReturnType.LIST,
                        keys, args.toArray());
            });
            return confirmed(what, "the decisions stand on the primary; a lost one leaves its delivery pending for reclaim",
                    batch.execute()).getResponses();
        });
        List<Admission> out = new ArrayList<>(requests.size());
        int reply = 0;
        for (var list : byQueue.values()) {
            List<?> flat = (List<?>) replies.get(reply++);
            for (int i = 0; i < list.size(); i++) {
                String code = String.valueOf(flat.get(2 * i));
                Instant due = Instant.ofEpochMilli(toLong(flat.get(2 * i + 1)));
                var decision = switch (code) {
                    case "R" -> Admission.Decision.RUN;
                    case "W" -> Admission.Decision.WAIT_RATE;
                    case "S" -> Admission.Decision.WAIT_SLOT;
                    default -> Admission.Decision.NOT_PENDING;
                };
                out.add(new Admission(list.get(i).delivery(), decision,
                        decision == Admission.Decision.RUN || decision == Admission.Decision.NOT_PENDING
                                ? Optional.empty() : Optional.of(due)));
            }
        }
        return out;
    }

    @Override
    public Map<String, QueueLimits> queueLimits(List<String> queues) {
        return flow.queueLimits(queues);
    }

    @Override
    public Map<String, QueuePartitions> partitions(List<String> queues) {
        return queues.isEmpty() ? Map.of() : flow.partitions(queues);
    }

    @Override
    public void setPartitions(String queue, QueuePartitions set) {
        Objects.requireNonNull(set, "partitions must not be null");
        for (String partition : set.all(queue)) {
            call("create the stream of partition '" + partition + "'", () -> {
                createGroup(client(), partition);
                return null;
            });
        }
        // the streams first: a worker that sees the new partitions finds their groups
        flow.setPartitions(queue, set);
    }

    @Override
    public void setQueueLimits(String queue, QueueLimits limits) {
        Objects.requireNonNull(limits, "limits must not be null");
        flow.setQueueLimits(queue, limits);
    }

    @Override
    public int slotsHeld(String queue, String limitId) {
        Long n = call("slotsHeld of '" + queue + "'", () -> client().getScoredSortedSet(keys(queue).slots(limitId), StringCodec.INSTANCE)
                .size()).longValue();
        return Math.toIntExact(n);
    }

    // ---- leases --------------------------------------------------------------------------

    @Override
    public void renewLeases(String consumer, List<Delivery> inFlight) {
        Map<String, List<Object>> argsByQueue = new LinkedHashMap<>();
        for (Delivery d : inFlight) {
            List<Object> args = argsByQueue.computeIfAbsent(RedisPriorities.streamOf(d), q -> new ArrayList<>(List.of(GROUP, consumer)));
            args.add(RedisPriorities.entryId(d.receipt()));
            args.add(Integer.toString(d.deliveryCount()));
        }
        if (argsByQueue.isEmpty()) {
            return;
        }
        // One script per queue (keys of one hash tag each), all queues in one pipeline: one round trip.
        call("renewLeases on queues " + argsByQueue.keySet(), () -> {
            RBatch batch = client().createBatch(BatchOptions.defaults());
            argsByQueue.forEach((queue, args) -> batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE,
                    LuaScripts.RENEW_LEASES, RScript.ReturnType.LONG,
                    List.of(RedisPriorities.streamKey(keys(RedisPriorities.queueOf(queue)), queue)), args.toArray()));
            return batch.execute();
        });
    }

    @Override
    public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
        if (max < 1) {
            return List.of();
        }
        if (priorities.levels(queue).length > 1) {
            return priorities.reclaim(queue, consumer, minIdle, max);
        }
        String cursor = reclaimCursors.getOrDefault(queue, "0-0");
        List<Object> flat = evalEntries("reclaim on queue '" + queue + "'", LuaScripts.RECLAIM, RScript.ReturnType.LIST,
                List.of(keys(queue).stream()), GROUP, consumer, Long.toString(minIdle.toMillis()), Integer.toString(max), cursor);
        reclaimCursors.put(queue, replyText(flat.getFirst()));
        return deliveries(queue, flat, 1);
    }

    @Override
    public List<Delivery> pendingOf(String queue, String consumer, int max) {
        if (max < 1) {
            return List.of();
        }
        if (priorities.levels(queue).length > 1) {
            return priorities.pendingOf(queue, consumer, max);
        }
        List<Object> flat = evalEntries("pendingOf on queue '" + queue + "'", LuaScripts.PENDING_OF, RScript.ReturnType.LIST,
                List.of(keys(queue).stream()), GROUP, consumer, Integer.toString(max));
        return deliveries(queue, flat, 0);
    }

    /**
     * Decodes entries flattened by a script read with {@link #evalEntries} as id, delivery count,
     * number of field strings, fields..., from {@code i}: decoded from bytes as a fetch decodes them,
     * so a re-delivered entry is taken or refused exactly as its first delivery was.
     */
    static List<Delivery> deliveries(String queue, List<Object> flat, int i) {
        List<Delivery> deliveries = new ArrayList<>();
        while (i < flat.size()) {
            String id = replyText(flat.get(i));
            int deliveryCount = Math.max(1, Integer.parseInt(replyText(flat.get(i + 1))));
            int n = Integer.parseInt(replyText(flat.get(i + 2)));
            Map<String, Object> fields = new LinkedHashMap<>();
            for (int j = 0; j < n; j += 2) {
                fields.put(replyFieldName(flat.get(i + 3 + j)), flat.get(i + 4 + j));
            }
            deliveries.add(fetched(queue, id, fields, deliveryCount));
            i += 3 + n;
        }
        return deliveries;
    }

    // ---- dead letters --------------------------------------------------------------------

    @Override
    public List<DeadLetter> readDeadLetters(String queue, Optional<String> cursor, int count) {
        if (count < 1) {
            return List.of();
        }
        StreamRangeArgs range = cursor.map(c -> StreamRangeArgs.startIdExclusive(parseId(c)))
                .orElse(StreamRangeArgs.startId(StreamMessageId.MIN)).endId(StreamMessageId.MAX).count(count);
        Map<StreamMessageId, Map<String, String>> entries = call("readDeadLetters of '" + queue + "'",
                () -> client().<String, String>getStream(keys(queue).deadLetters(), StringCodec.INSTANCE)
                        .range(range));
        List<DeadLetter> letters = new ArrayList<>(entries.size());
        entries.forEach((id, fields) -> letters.add(DeadLetterFields.decode(queue, id, fields)));
        return letters;
    }

    @Override
    public Optional<DeadLetter> readDeadLetter(String queue, String deadLetterId) {
        StreamMessageId id = parseDeadLetterId(deadLetterId);
        Map<StreamMessageId, Map<String, String>> entries = call("readDeadLetter of '" + queue + "'",
                () -> client().<String, String>getStream(keys(queue).deadLetters(), StringCodec.INSTANCE)
                        .range(StreamRangeArgs.startId(id).endId(id).count(1)));
        return entries.entrySet().stream().findFirst().map(e -> DeadLetterFields.decode(queue, e.getKey(), e.getValue()));
    }

    /** A dead-letter id as {@code dlq list --details} shows it; anything else is the caller's mistake, said in one line. */
    private static StreamMessageId parseDeadLetterId(String id) {
        StreamMessageId parsed = id.matches("\\d{1,19}-\\d{1,19}") ? parseIdOrNull(id) : null;
        if (parsed == null) {
            throw new IllegalArgumentException("'" + id + "' is not a dead-letter id: Redis ids look like 1764500000000-0"
                    + " (see 'binomic dlq list --details')");
        }
        return parsed;
    }

    @Override
    public int replayDeadLetters(String queue, List<String> deadLetterIds) {
        deadLetterIds.forEach(RedisBroker::parseDeadLetterId);
        RedisKeys k = keys(queue);
        requeueTrackedJobs(queue, deadLetterIds);
        int replayed = 0;
        for (int from = 0; from < deadLetterIds.size(); from += REPLAY_CHUNK) {
            List<Object> args = new ArrayList<>();
            args.add(Long.toString(System.currentTimeMillis()));
            args.addAll(deadLetterIds.subList(from, Math.min(deadLetterIds.size(), from + REPLAY_CHUNK)));
            long n = evalWrite("replayDeadLetters of '" + queue + "'", REPLAY_AGAIN, LuaScripts.REPLAY, RScript.ReturnType.LONG,
                    List.of(k.deadLetters(), k.stream()), args.toArray());
            replayed += Math.toIntExact(n);
        }
        return replayed;
    }

    /**
     * Puts the records of tracked dead letters back to QUEUED before they are replayed: a worker
     * that fetched a replayed job while its record still said DEAD_LETTERED would skip it.
     */
    private void requeueTrackedJobs(String queue, List<String> deadLetterIds) {
        RedisKeys k = keys(queue);
        for (String id : deadLetterIds) {
            Optional<Message> message = readDeadLetter(queue, id).flatMap(DeadLetter::message).filter(Message::isTracked);
            message.ifPresent(m -> eval("requeue job " + m.id(), LuaScripts.REQUEUE_JOB, RScript.ReturnType.LONG,
                    List.of(k.job(m.id())), m.task(), Long.toString(System.currentTimeMillis()), m.trackForMillis()));
        }
    }

    @Override
    public int deleteDeadLetters(String queue, List<String> deadLetterIds) {
        StreamMessageId[] ids = deadLetterIds.stream().map(RedisBroker::parseIdOrNull)
                .filter(Objects::nonNull).toArray(StreamMessageId[]::new);
        if (ids.length == 0) {
            return 0;
        }
        long n = call("deleteDeadLetters of '" + queue + "'",
                () -> client().getStream(keys(queue).deadLetters(), StringCodec.INSTANCE).remove(ids));
        return Math.toIntExact(n);
    }

    // ---- inspection ----------------------------------------------------------------------

    @Override
    public QueueStats stats(String queue) {
        RedisKeys k = keys(queue);
        List<Object> r = eval("stats of '" + queue + "'", LuaScripts.STATS, RScript.ReturnType.LIST,
                List.of(k.stream(), k.delayed(), k.deadLetters()), GROUP);
        return priorities.withLevels(queue, new QueueStats(queue, toLong(r.get(0)), toLong(r.get(1)), toLong(r.get(2)),
                toLong(r.get(3)), Math.toIntExact(toLong(r.get(4)))));
    }

    @Override
    public void addActivity(Map<String, List<ActivityBucket>> byQueue) {
        String ttl = Long.toString(ActivityBucket.KEPT.toMillis());
        byQueue.forEach((queue, buckets) -> {
            if (buckets.isEmpty()) {
                return;
            }
            RedisKeys k = keys(queue);
            List<Object> keys = new ArrayList<>();
            List<Object> args = new ArrayList<>(List.of(ttl));
            for (ActivityBucket b : buckets) {
                keys.add(k.activity(b.minute()));
                for (long n : new long[] {b.succeeded(), b.failed(), b.retried(), b.deadLettered(), b.runNanos(), b.maxRunNanos()}) {
                    args.add(Long.toString(n));
                }
            }
            eval("activity of '" + queue + "'", LuaScripts.ADD_ACTIVITY, RScript.ReturnType.LONG, keys, args.toArray());
        });
    }

    @Override
    public List<ActivityBucket> activity(String queue, Instant since) {
        RedisKeys k = keys(queue);
        Instant first = ActivityBucket.minuteOf(since);
        Instant last = ActivityBucket.minuteOf(Instant.now());
        if (first.isAfter(last) || Duration.between(first, last).compareTo(ActivityBucket.KEPT) > 0) {
            first = last.minus(ActivityBucket.KEPT);
        }
        List<Instant> minutes = new ArrayList<>();
        for (Instant m = first; !m.isAfter(last); m = m.plusSeconds(60)) {
            minutes.add(m);
        }
        List<Object> flat = eval("activity of '" + queue + "'", LuaScripts.READ_ACTIVITY, RScript.ReturnType.LIST,
                minutes.stream().map(m -> (Object) k.activity(m)).toList());
        List<ActivityBucket> buckets = new ArrayList<>();
        for (int i = 0; i < minutes.size(); i++) {
            long[] n = new long[6];
            for (int j = 0; j < 6; j++) {
                n[j] = Long.parseLong(String.valueOf(flat.get(i * 6 + j)));
            }
            ActivityBucket b = new ActivityBucket(minutes.get(i), n[0], n[1], n[2], n[3], n[4], n[5]);
            if (!b.isEmpty()) {
                buckets.add(b);
            }
        }
        return buckets;
    }

    @Override
    public long removeSettled(String queue) {
        lastTrim.put(queue, System.nanoTime());
        return this.<Long>eval("removeSettled of '" + queue + "'", LuaScripts.TRIM_ACKED, RScript.ReturnType.LONG,
                List.of(keys(queue).stream()), GROUP) + priorities.removeSettled(queue);
    }

    @Override
    public int removeIdleConsumers(String queue, Duration idle) {
        long n = this.<Long>eval("removeIdleConsumers of '" + queue + "'", LuaScripts.REMOVE_IDLE_CONSUMERS, RScript.ReturnType.LONG,
                List.of(keys(queue).stream()), GROUP, Long.toString(idle.toMillis())) + priorities.removeIdleConsumers(queue, idle);
        return Math.toIntExact(n);
    }

    // ---- flow control: unique jobs, debounce, pause (RedisFlowControl) -------------------

    private final RedisFlowControl flow = new RedisFlowControl(this);

    @Override
    public UUID submitUnique(Message message, Instant dueAt) {
        return flow.submitAllUnique(List.of(message), dueAt).getFirst();
    }

    @Override
    public List<UUID> submitAllUnique(List<Message> messages, Instant dueAt) {
        return messages.isEmpty() ? List.of() : flow.submitAllUnique(messages, dueAt);
    }

    @Override
    public UUID submitDebounced(Message message, Instant dueAt) {
        return flow.submitDebounced(message, dueAt);
    }

    @Override
    public void releaseUniqueAtStart(List<Message> started) {
        flow.releaseUniqueAtStart(started);
    }

    @Override
    public Map<String, PauseState> pauseStates(List<String> queues) {
        return flow.pauseStates(queues);
    }

    @Override
    public void pause(String queue, Optional<String> task) {
        flow.pause(queue, task);
    }

    @Override
    public void resume(String queue, Optional<String> task) {
        flow.resume(queue, task);
    }

    @Override
    public void unpark(String queue) {
        flow.unpark(queue);
    }

    // ---- plumbing ------------------------------------------------------------------------

    static final String SUBMIT_AGAIN = "it may or may not survive a failover; submitting it again may enqueue it twice"
            + " (with the same message id)";
    private static final String SETTLE_AGAIN = "the worker sends the outcomes again (a settlement already applied is a no-op)";
    static final String MOVE_AGAIN = "the messages are on the primary's stream; if it fails over before they reach a"
            + " replica they are still due in the replica's delayed set and move again";
    static final String TICK_AGAIN = "if the primary fails over before it reaches a replica, the tick fires again";
    private static final String REPLAY_AGAIN = "if the primary fails over before they reach a replica, they are dead letters again";

    /**
     * Options of a pipeline that writes: with {@code wait.replicas} set, a {@code WAIT} ends it
     * (same round trip) and the reply must allow for the wait; otherwise the defaults, exactly what
     * every write used before the option existed.
     */
    BatchOptions writeOptions() {
        if (!replicaWait.on()) {
            return BatchOptions.defaults();
        }
        return BatchOptions.defaults().sync(replicaWait.replicas(), replicaWait.timeout())
                .responseTimeout(config.commandTimeout().plus(replicaWait.timeout()).toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * The batch's result, if the replicas {@code wait.replicas} asks for confirmed it. Otherwise the
     * write is on the primary only, and the caller must know: a {@link NotReplicatedException} saying
     * so and what happens if it is tried again ({@code consequence}).
     */
    <R> BatchResult<R> confirmed(String what, String consequence, BatchResult<R> result) {
        if (replicaWait.on() && result.getSyncedSlaves() < replicaWait.replicas()) {
            throw new NotReplicatedException("Redis " + what + " at " + setup.target() + " was written to the primary, but only "
                    + result.getSyncedSlaves() + " of the " + replicaWait.replicas() + " replicas required (BrokerConfig option "
                    + RedissonSetup.WAIT_REPLICAS_OPTION + ") confirmed it within " + replicaWait.timeout().toMillis() + " ms ("
                    + RedissonSetup.WAIT_TIMEOUT_OPTION + "): " + consequence, result.getSyncedSlaves(), replicaWait.replicas());
        }
        return result;
    }

    /** {@link #eval} for a script that writes: the same call when waiting is off, a pipeline ending in WAIT when on. */
    @SuppressWarnings("unchecked")
    <R> R evalWrite(String what, String consequence, String script, RScript.ReturnType type, List<Object> keys,
                            Object... args) {
        if (!replicaWait.on()) {
            return eval(what, script, type, keys, args);
        }
        return call(what, () -> {
            RBatch batch = client().createBatch(writeOptions());
            batch.getScript(StringCodec.INSTANCE).evalAsync(RScript.Mode.READ_WRITE, script, type, keys, args);
            return (R) confirmed(what, consequence, batch.execute()).getResponses().getFirst();
        });
    }

    <R> R eval(String what, String script, RScript.ReturnType type, List<Object> keys, Object... args) {
        return call(what, () -> client().getScript(StringCodec.INSTANCE).eval(RScript.Mode.READ_WRITE, script, type, keys, args));
    }

    /**
     * {@link #eval} for a script that returns stream entries to {@link #fetched}: its reply's strings
     * come back as {@link #entryCodec()} reads them (bytes; read them with {@link #replyText} and
     * {@link #replyFieldName}), its integers as numbers.
     */
    <R> R evalEntries(String what, String script, RScript.ReturnType type, List<Object> keys, Object... args) {
        return call(what, () -> client().getScript(entryCodec()).eval(RScript.Mode.READ_WRITE, script, type, keys, args));
    }

    /** A string of a reply of {@link #evalEntries}. */
    static String replyText(Object string) {
        return string instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(string);
    }

    /** A field name in a reply of {@link #evalEntries}: one of {@link StreamFields}' constants when it is one. */
    static String replyFieldName(Object string) {
        return string instanceof byte[] bytes ? EntryCodec.fieldName(bytes) : String.valueOf(string);
    }

    /** Runs a Redis operation, turning Redisson's exceptions into {@link BrokerException}s that say what failed. */
    <R> R call(String what, Supplier<R> operation) {
        return call(what, operation, 1);
    }

    /**
     * {@link #call(String, Supplier)} for a producer's write, tried up to {@value #PRODUCER_TRIES}
     * times when the connection fails under it. Redisson never retries a non-idempotent command
     * (XADD) after a response timeout, and a connection killed mid-command ends exactly so: failing
     * the submit would push the retry onto every caller. If an earlier try did land, the message is
     * enqueued twice with the same id: at-least-once, never lost.
     */
    <R> R callRetryingBrokenConnections(String what, Supplier<R> operation) {
        return call(what, operation, PRODUCER_TRIES);
    }

    private <R> R call(String what, Supplier<R> operation, int tries) {
        evictionPolicy.recheckIfDue(this::client, setup.redisson());
        for (int attempt = 1; ; attempt++) {
            try {
                return operation.get();
            } catch (BrokerException | IllegalStateException | IllegalArgumentException e) {
                throw e;
            } catch (RedisTimeoutException | RedisConnectionException e) {
                if (attempt >= tries) {
                    throw failure(what, e);
                }
                LOG.log(System.Logger.Level.WARNING, "Redis {0} failed ({1}); trying again", what, e.getMessage());
            } catch (RuntimeException e) {
                if (e instanceof CompletionException && e.getCause() instanceof BrokerException own) {
                    throw own; // ours, from a pipeline's callback (NotReplicatedException): already says what and where
                }
                if (causedBy(e, RedisNoScriptException.class)) {
                    // Nothing in the failed pipeline ran its script; the caller's own retry finds them loaded.
                    reloadScripts(what);
                }
                throw failure(what, e);
            }
        }
    }

    private static boolean causedBy(Throwable t, Class<? extends Throwable> type) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (type.isInstance(c) || Arrays.stream(c.getSuppressed()).anyMatch(type::isInstance)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Redis does not replicate its script cache: after a failover (or a restart, or SCRIPT FLUSH) the
     * primary has none, and Redisson, which sends pipelined scripts by SHA, does not reload them, so
     * every settle pipeline would fail until something else happened to load its script.
     */
    private void reloadScripts(String what) {
        try {
            RScript scripts = client().getScript(StringCodec.INSTANCE);
            LuaScripts.ALL.forEach(scripts::scriptLoad);
            PriorityScripts.ALL.forEach(scripts::scriptLoad);
            LOG.log(System.Logger.Level.WARNING, "Redis at {0} had lost the broker''s Lua scripts ({1} failed with NOSCRIPT: a"
                    + " failover, a restart or SCRIPT FLUSH); loaded them again", setup.target(), what);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "Redis at {0}: loading the broker''s Lua scripts again failed: {1}", setup.target(),
                    e.getMessage());
        }
    }

    private BrokerException failure(String what, Throwable cause) {
        Throwable c = cause instanceof CompletionException && cause.getCause() != null ? cause.getCause() : cause;
        if (OutOfMemoryReplies.isOutOfMemory(c)) {
            return OutOfMemoryReplies.failure(setup.target(), what, c);
        }
        return new BrokerException("Redis " + what + " failed at " + setup.target() + ": " + RedissonSetup.rootMessage(c), c);
    }

    static long toLong(Object value) {
        return value instanceof Number n ? n.longValue() : Long.parseLong(String.valueOf(value));
    }

    static StreamMessageId parseId(String id) {
        StreamMessageId parsed = parseIdOrNull(id);
        if (parsed == null) {
            throw new IllegalArgumentException("not a stream entry id (<ms>-<seq>): '" + id + "'");
        }
        return parsed;
    }

    private static StreamMessageId parseIdOrNull(String id) {
        int dash = id.indexOf('-');
        try {
            return dash < 0 ? new StreamMessageId(Long.parseLong(id))
                    : new StreamMessageId(Long.parseLong(id.substring(0, dash)), Long.parseLong(id.substring(dash + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
