package io.binomic.redis.internal;

import static io.binomic.redis.internal.RedisKeys.GROUP;

import io.binomic.api.BrokerException;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.PendingDeliveries;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.redisson.api.BatchOptions;
import org.redisson.api.RBatch;
import org.redisson.api.RStream;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.api.stream.StreamMultiReadGroupArgs;
import org.redisson.client.RedisTimeoutException;
import org.redisson.client.codec.StringCodec;

/**
 * The broker's fetch (XREADGROUP over the queues' streams, or {@link RedisPriorities} when a queue
 * has priority levels), and what is pending to a consumer ({@link PendingDeliveries}): the
 * deliveries of a read whose reply was lost.
 */
final class RedisFetch implements PendingDeliveries {
    private final RedisContext redis;
    private final RedisPriorities priorities;
    private final QueueFetchFailures fetchFailures;
    /** "queue consumer" pairs registered with XGROUP CREATECONSUMER by this broker. */
    private final Set<String> registeredConsumers = ConcurrentHashMap.newKeySet();
    /**
     * Past its block time by this much, a blocking read with no reply is ended by Redisson itself, with an empty result
     * (3 s in its RedisExecutor, for a connection lost under the command): that is no answer from Redis. A real empty
     * reply comes back at the block time, a round trip after it.
     */
    static final Duration NO_REPLY_FILLED_AFTER = Duration.ofMillis(2900);
    /** Which queue a one-at-a-time fetch starts with, so no queue is always served first. */
    private final AtomicInteger fetchRotation = new AtomicInteger();

    RedisFetch(RedisContext redis, RedisPriorities priorities, QueueFetchFailures fetchFailures) {
        this.redis = redis;
        this.priorities = priorities;
        this.fetchFailures = fetchFailures;
    }

    /**
     * Never more than {@code max} in total. {@code XREADGROUP ... COUNT n} over several streams
     * returns up to n entries <em>per stream</em>, so over k queues one read asks for
     * {@code max / k} per stream. When that is zero (fewer free slots than queues), and on Redis
     * Cluster (streams in different slots), the queues are read one at a time, starting at a
     * different queue each call, without blocking; only when all are empty does it block: on every
     * queue at once ({@link #blockOnAll}), or on Redis Cluster on one queue for {@code wait / k}, so a
     * message on any queue waits at most that long.
     */
    List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
        List<Delivery> got = fetchFrom(queues, consumer, max, wait);
        fetchFailures.logRefusals();
        return got;
    }

    private List<Delivery> fetchFrom(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
        if (queues.isEmpty() || max < 1) {
            return List.of();
        }
        queues = fetchFailures.readable(queues);
        if (priorities.anyLevels(queues)) {
            return priorities.fetch(queues, consumer, max, wait);
        }
        int k = queues.size();
        if (k == 1 || max >= k && !redis.setup.redisson().isClusterConfig()) {
            try {
                List<Delivery> got = read(queues, consumer, max / k, wait);
                queues.forEach(fetchFailures::answered);
                return got;
            } catch (BrokerException e) {
                if (RedisContext.serverUnreachable(e)) {
                    throw e; // no queue would answer: reading them one at a time would only wait k times as long
                }
                if (k == 1) {
                    fetchFailures.failed(queues.getFirst(), e);
                    throw e;
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
                if (RedisContext.serverUnreachable(e) && all.isEmpty()) {
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
            List<String> answering = new ArrayList<>(k);
            for (int i = 0; i < k; i++) {
                String queue = queues.get((first + i) % k);
                if (!fetchFailures.failing(queue)) {
                    answering.add(queue);
                }
            }
            if (answering.size() > 1 && !redis.setup.redisson().isClusterConfig()) {
                List<Delivery> got = blockOnAll(answering, consumer, max, wait);
                if (got != null) {
                    return got;
                }
            }
            int blockOn = first;
            for (int i = 0; i < k && fetchFailures.failing(queues.get(blockOn)); i++) {
                blockOn = (blockOn + 1) % k;
            }
            all.addAll(read(List.of(queues.get(blockOn)), consumer, max, wait.dividedBy(k)));
        }
        return all;
    }

    /**
     * One blocking read over every queue of {@code queues} (all of them empty a moment ago), so that an entry arriving on
     * any of them ends the wait: a wait on one queue at a time left a job on another (a waiter that a release of its
     * queue's concurrency slot moved back to the stream) for the rest of that wait, with the slot free. Its COUNT is per
     * stream: what it hands out beyond {@code max} (entries that landed on several streams as it began) is given back to
     * the end of its stream, where it had just arrived. Null when the read fails for one queue (XREADGROUP checks every
     * stream before it reads any: nothing was handed out), so the caller waits on one queue instead.
     */
    private List<Delivery> blockOnAll(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
        List<Delivery> got;
        try {
            got = read(queues, consumer, Math.max(1, max / queues.size()), wait);
        } catch (BrokerException e) {
            if (RedisContext.serverUnreachable(e)) {
                throw e;
            }
            return null;
        }
        queues.forEach(fetchFailures::answered);
        if (got.size() <= max) {
            return got;
        }
        Map<String, List<Object>> back = new LinkedHashMap<>();
        for (Delivery d : got.subList(max, got.size())) {
            back.computeIfAbsent(d.queue(), q -> new ArrayList<>(List.of(GROUP, consumer))).add(RedisPriorities.entryId(d.receipt()));
        }
        back.forEach((queue, args) -> {
            try {
                redis.eval("give back to '" + queue + "'", LuaScripts.GIVE_BACK, org.redisson.api.RScript.ReturnType.LONG,
                        List.of(redis.keys(queue).stream()), args.toArray());
            } catch (BrokerException e) {
                RedisContext.LOG.log(System.Logger.Level.WARNING, "giving back {0} entries of ''{1}'' failed ({2}); they are reclaimed"
                        + " after a lease", args.size() - 2, queue, e.getMessage());
            }
        });
        return List.copyOf(got.subList(0, max));
    }

    /** One XREADGROUP over the streams of {@code queues}, up to {@code countPerStream} entries from each. */
    private List<Delivery> read(List<String> queues, String consumer, int countPerStream, Duration wait) throws InterruptedException {
        registerConsumer(queues, consumer);
        Map<String, String> queueByStream = new LinkedHashMap<>();
        for (String queue : queues) {
            queueByStream.put(redis.keys(queue).stream(), queue);
        }
        StreamMultiReadGroupArgs args = readArgs(queueByStream.keySet(), countPerStream);
        Map<String, Map<StreamMessageId, Map<String, Object>>> result;
        try {
            result = readGroup(redis, queueByStream.keySet(), consumer, args, wait);
        } catch (ExecutionException e) {
            if (groupVanished(e.getCause())) {
                // The stream or group vanished (Redis restarted without persistence, FLUSHALL, the
                // stream evicted or deleted): recreate it and let the caller fetch again.
                recreateGroups(queues);
                return List.of();
            }
            throw redis.failure("fetch from " + queues, e.getCause());
        }
        if (result == null || result.isEmpty()) {
            return List.of();
        }
        List<Delivery> deliveries = new ArrayList<>();
        result.forEach((stream, entries) -> {
            String queue = queueByStream.getOrDefault(stream, stream);
            entries.forEach((id, fields) -> deliveries.add(ScriptReplies.fetched(queue, id.toString(), fields, 1)));
        });
        return deliveries;
    }

    /**
     * True when a read failed because its stream or group is gone: NOGROUP, or (Redis 7) the
     * error that ends a read blocked on a stream that was deleted meanwhile.
     */
    static boolean groupVanished(Throwable failure) {
        String message = String.valueOf(failure.getMessage());
        return message.contains("NOGROUP") || message.contains("UNBLOCKED the stream key no longer exists");
    }

    /** The arguments of an XREADGROUP of new entries of {@code streams}, up to {@code count} from each. */
    static StreamMultiReadGroupArgs readArgs(Set<String> streams, int count) {
        Map<String, StreamMessageId> others = new LinkedHashMap<>();
        streams.stream().skip(1).forEach(s -> others.put(s, StreamMessageId.NEVER_DELIVERED));
        return StreamMultiReadGroupArgs.greaterThan(StreamMessageId.NEVER_DELIVERED, others).count(count);
    }

    /**
     * The XREADGROUP of {@code args} (over {@code streams}, the first named here), blocking up to {@code wait} when that
     * is not zero, its entries read with {@link EntryCodec}; an interrupt cancels it.
     *
     * @throws ExecutionException what Redis replied instead
     * @throws BrokerException no reply came: a blocking read that Redisson ended itself, for a connection lost under it
     */
    static Map<String, Map<StreamMessageId, Map<String, Object>>> readGroup(RedisContext redis, Set<String> streams,
            String consumer, StreamMultiReadGroupArgs args, Duration wait) throws InterruptedException, ExecutionException {
        if (wait.toMillis() > 0) {
            args = args.timeout(wait); // BLOCK 0 would mean forever: never pass a zero wait.
        }
        RStream<String, Object> first = redis.client().getStream(streams.iterator().next(), EntryCodec.INSTANCE);
        long started = System.nanoTime();
        CompletableFuture<Map<String, Map<StreamMessageId, Map<String, Object>>>> read =
                first.readGroupAsync(GROUP, consumer, args).toCompletableFuture();
        Map<String, Map<StreamMessageId, Map<String, Object>>> result;
        try {
            result = read.get();
        } catch (InterruptedException e) {
            read.cancel(true);
            throw e;
        }
        long tookNanos = System.nanoTime() - started;
        if (wait.toMillis() > 0 && (result == null || result.isEmpty()) && tookNanos >= wait.plus(NO_REPLY_FILLED_AFTER).toNanos()) {
            // Returned empty, it would pass for a fetch that worked while Redis is down, and end the worker's account of
            // the outage (its health's age); what the lost read handed out, if anything, the recovery of lost reads finds.
            String message = "Redis at " + redis.setup.target() + " did not answer a read of " + streams + " blocking "
                    + wait.toMillis() + " ms within " + TimeUnit.NANOSECONDS.toMillis(tookNanos)
                    + " ms: the connection was lost, Redis is stopped, restarting or unreachable";
            throw new BrokerException(message, new RedisTimeoutException(message));
        }
        return result;
    }

    private void recreateGroups(List<String> queues) {
        RedisContext.LOG.log(System.Logger.Level.WARNING, "consumer group missing on {0} (Redis lost its data?); recreating it", queues);
        for (String queue : queues) {
            registeredConsumers.removeIf(k -> k.startsWith(queue + " "));
            redis.call("recreate the group of '" + queue + "'", () -> {
                redis.createGroup(redis.client(), queue);
                return null;
            });
        }
    }

    /** Registers {@code consumer} on {@code queue} again at its next read: it was removed. */
    void forgetConsumer(String queue, String consumer) {
        registeredConsumers.remove(queue + " " + consumer);
    }

    /**
     * Redis before 7.2 creates a consumer only when a read returns something; a worker waiting on
     * an empty queue would then be invisible to {@code stats} and to {@code removeIdleConsumers}.
     * Registering it explicitly costs one pipelined round trip per queue and consumer, once.
     */
    private void registerConsumer(List<String> queues, String consumer) {
        List<String> missing = queues.stream().filter(q -> !registeredConsumers.contains(q + " " + consumer)).toList();
        if (missing.isEmpty()) {
            return;
        }
        redis.call("register consumer '" + consumer + "'", () -> {
            RBatch batch = redis.client().createBatch(BatchOptions.defaults());
            for (String queue : missing) {
                batch.getStream(redis.keys(queue).stream(), StringCodec.INSTANCE).createConsumerAsync(GROUP, consumer);
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

    /** Every level of the queue ({@link RedisPriorities#pendingOf}); one script when it has only the default. */
    @Override
    public List<Delivery> pendingOf(String queue, String consumer, int max) {
        return max < 1 ? List.of() : priorities.pendingOf(queue, consumer, max);
    }
}
