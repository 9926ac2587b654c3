package io.binomic.redis.internal;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.QueuePartitions;
import java.time.Instant;
import java.util.UUID;

/**
 * The Redis key layout of one queue. Every key carries the hash tag {@code {queue}}, so all keys
 * of a queue live in one Redis Cluster slot and a Lua script may touch several of them.
 *
 * @param prefix the configured key prefix, e.g. {@code binomic}
 * @param queue the queue name
 */
record RedisKeys(String prefix, String queue) {

    /** The consumer group every worker reads through. */
    static final String GROUP = "binomic";

    private String base() { return prefix + ":{" + queue + "}:"; }

    /** Ready and pending messages. */
    String stream() { return base() + "stream"; }

    /** Scheduled messages (DELAY submissions, retry backoffs); score = due epoch ms. */
    String delayed() { return base() + "delayed"; }

    /** Dead letters. */
    String deadLetters() { return base() + "dlq"; }

    /**
     * When each worker last said it is alive on the queue (hash: consumer to epoch ms), expiring a
     * few idle limits after the last one did; see {@code remove_idle_consumers.lua}.
     */
    String consumersSeen() { return base() + "consumers-seen"; }

    /** Last fired tick (epoch ms) of a periodic job; expires a few periods after it was set. */
    String cron(String job) { return base() + "cron:" + job; }

    /** What the workers did in one minute (a hash; see {@link ActivityBucket}), expiring after two hours. */
    String activity(Instant minute) { return base() + "activity:" + minute.getEpochSecond() / 60; }

    /** The record of a tracked job (a hash; see {@link JobRecords}). */
    String job(UUID id) { return base() + "job:" + id; }

    /** The pub/sub channel of the queue's job events: {@code E <id>} (ended), {@code C <id>} (cancel requested). */
    String jobEvents() { return base() + "jobs"; }

    // ---- flow control ----

    /** A unique key of {@code task}: a string holding the id of the job that holds it, with a TTL. */
    String unique(String task, String key) { return base() + "unique:" + task + ":" + key; }

    /** A debounce key of {@code task}: a string holding the delayed-set member of the job waiting under it. */
    String debounce(String task, String key) { return base() + "debounce:" + task + ":" + key; }

    /** What is paused: a set of task names, and {@code *} for the whole queue. */
    String paused() { return base() + "paused"; }

    /** The queue's own limits (hash: rate.permits, rate.periodMillis, rate.burst, concurrency); see QueueLimits. */
    String queueLimits() { return base() + "limits"; }

    /**
     * The partitions of the logical queue (hash: count, highest); see
     * {@link QueuePartitions}. Kept under the logical queue's tag (partition 0's).
     */
    String partitions() { return base() + "partitions"; }

    /**
     * On a Redis Cluster, the final outcomes of this queue's jobs of batches not applied to their batch
     * yet (hash: {@code <batch id> <job id>} to outcome letter); see {@code ClusterBatches}.
     */
    String batchOutbox() { return base() + "batch-outbox"; }

    /**
     * On a Redis Cluster, the final outcomes of this queue's jobs of workflows not applied to their
     * workflow yet (hash: {@code <workflow id> <job id> <outcome>} to outcome letter); see {@code ClusterWorkflows}.
     */
    String workflowOutbox() { return base() + "workflow-outbox"; }

    /** On a Redis Cluster, the mark that job or callback {@code id} of a batch or workflow was enqueued (a string with a TTL); see {@code ClusterBatches}. */
    String batchOnce(UUID id) { return base() + "batch-once:" + id; }

    /**
     * The mark that an enqueue call waiting for replicas, whose first message is {@code firstMessage}, ran (a string with
     * a TTL): a resend of the call finds it and enqueues nothing again; see {@code enqueue_all.lua}.
     */
    String enqueued(UUID firstMessage) { return base() + "enqueued:" + firstMessage; }

    /** The prefix of the job record keys ({@link #job}). */
    String jobPrefix() { return base() + "job:"; }

    /** Admitted deliveries (hash: receipt to the concurrency limits whose slots it holds); see the flow limits of lib.lua. */
    String held() { return base() + "held"; }

    /** The receipts holding a slot of concurrency limit {@code id} (sorted set, score = when taken). */
    String slots(String id) { return base() + "slots:" + id; }

    /** The messages waiting for a slot of concurrency limit {@code id} (sorted set: priority, then arrival); see admit.lua. */
    String slotWaiters(String id) { return base() + "wait:" + id; }

    /** The state of rate limit {@code id} (hash: tu, ru, wu, iu, in µs); see admit.lua. */
    String rate(String id) { return base() + "rate:" + id; }
}
