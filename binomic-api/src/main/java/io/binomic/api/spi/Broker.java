package io.binomic.api.spi;

import io.binomic.api.DeadLetter;
import io.binomic.api.JobHandle;
import io.binomic.api.Message;
import io.binomic.api.QueueStats;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * Stores messages and hands them to workers. The delivery state machine lives in the core and
 * only calls these primitives, so every broker behaves the same; {@code BrokerContractTest}
 * in binomic-core's test jar is the suite every implementation must pass.
 *
 * <p>Guarantees an implementation must give: a message handed out by {@link #fetch} stays
 * pending (owned by the consumer) until it is {@linkplain #settle settled} by its owner or
 * {@linkplain #reclaim reclaimed}; a settlement by a consumer that no longer owns the delivery
 * changes nothing; {@link #fetch} never hands out more than {@code max} messages in total, however
 * many queues it reads. A {@link Settlement.RetryLater} is stored, atomically with the ack, in the
 * store of deferred work the broker shares with its {@link Scheduler} (from the {@link SchedulerProvider}
 * of the same kind), which puts it back on its queue when it is due.
 */
public interface Broker extends AutoCloseable {

    /**
     * Connects and prepares the given queues (streams, consumer groups). Fails fast with a
     * {@link io.binomic.api.BrokerException}. An empty list connects without creating anything:
     * what inspection tools use, so that looking at a queue never creates it.
     */
    void start(List<String> queues);

    /** Enqueues one message on {@code message.queue()}. */
    void enqueue(Message message);

    /** Enqueues many messages, pipelined; the fast path for producers. */
    void enqueueAll(List<Message> messages);

    /**
     * Hands out up to {@code max} messages in total from {@code queues} to {@code consumer}, waiting
     * up to {@code wait} when none is ready. Returns an empty list on timeout. Over several queues,
     * no queue is always served first.
     */
    List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException;

    /**
     * Records how deliveries ended, in as few round trips as the broker allows (one per call on
     * Redis). Each settlement is fenced: it is applied only while {@code consumer} still owns its
     * delivery, checked atomically with the change (the entry is pending, held by {@code consumer},
     * with a delivery count at least the settlement's: a consumer that reclaimed a delivery it still
     * held settles it either way); otherwise it is a no-op. A retry or a dead letter is atomic with
     * the ack of the failed delivery.
     *
     * @return what was not applied, and why
     * @throws io.binomic.api.BrokerException when the broker cannot be reached; the caller keeps the
     *         settlements and sends them again (a settlement that did land the first time is then
     *         reported {@linkplain SettleReport#notPending() not pending}, and changes nothing)
     */
    SettleReport settle(String consumer, List<Settlement> settlements);

    /**
     * Resets the idle time of deliveries {@code consumer} still holds (running, or finished but not
     * yet settled), so they are not reclaimed. Fenced like {@link #settle}: a delivery another
     * consumer took over is left alone.
     */
    void renewLeases(String consumer, List<Delivery> inFlight);

    /**
     * Takes over up to {@code max} deliveries of {@code queue} idle for at least {@code minIdle}
     * (their owner stopped renewing), for {@code consumer}. Their {@link Delivery#deliveryCount()}
     * is incremented, so {@link Delivery#attempt()} is one higher than before.
     */
    List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max);

    /** Reads up to {@code count} dead letters of {@code queue} after {@code cursor} (empty = from the oldest). */
    List<DeadLetter> readDeadLetters(String queue, Optional<String> cursor, int count);

    /**
     * The dead letter {@code deadLetterId} of {@code queue}, if there is one.
     *
     * @throws IllegalArgumentException when {@code deadLetterId} is not an id this broker could have given
     */
    Optional<DeadLetter> readDeadLetter(String queue, String deadLetterId);

    /**
     * Atomically moves each dead letter back onto its queue with attempt 1, a fresh enqueue time and
     * the {@link Message#REPLAYED_FROM} header; returns how many were replayed. Ids that do not
     * exist (any more) and entries without a decodable message ({@link DeadLetter#message()} empty)
     * are skipped: the caller tells which by reading them first.
     *
     * @throws IllegalArgumentException when an id is not an id this broker could have given
     */
    int replayDeadLetters(String queue, List<String> deadLetterIds);

    /** Deletes dead letters; returns how many existed. */
    int deleteDeadLetters(String queue, List<String> deadLetterIds);

    /** Counts of the queue. */
    QueueStats stats(String queue);

    /** Removes consumers of {@code queue} that hold nothing pending and were idle for {@code idle}; returns how many. */
    int removeIdleConsumers(String queue, Duration idle);

    /**
     * The deliveries of {@code queue} pending under {@code consumer}, up to {@code max}, without
     * changing them (no delivery is counted). A worker calls it after a fetch failed in a way that
     * may have delivered entries it never received (a reply lost to a timeout), to run those: they
     * would otherwise wait a whole lease, and come back as one attempt more than they ran. Returns
     * nothing by default (a broker whose fetch cannot hand out what the caller did not receive).
     */
    default List<Delivery> pendingOf(String queue, String consumer, int max) {
        return List.of();
    }

    /**
     * Removes settled entries the broker kept to make settling cheap (the Redis broker acks
     * without deleting and trims acknowledged entries in bulk). Workers call it periodically, so
     * what the last settlements left behind does not stay. Returns how many were removed; the
     * default keeps nothing behind and does nothing.
     */
    default long removeSettled(String queue) {
        return 0;
    }

    /**
     * Adds what the workers of one process did, per queue, to the minute buckets every process
     * adds to (see {@link ActivityBucket}): called every few seconds with the counts since the
     * last call, never per message (on Redis: one script per queue). A bucket older than
     * {@link ActivityBucket#KEPT} is forgotten. Does nothing by default.
     */
    default void addActivity(Map<String, List<ActivityBucket>> byQueue) {
    }

    /**
     * The minute buckets of {@code queue} from {@code since} (inclusive, rounded down to its
     * minute), oldest first; minutes in which nothing was counted may be absent. Empty by default.
     */
    default List<ActivityBucket> activity(String queue, java.time.Instant since) {
        return List.of();
    }

    /**
     * The flow-control decision for deliveries {@code consumer} holds, in as few round trips as the
     * broker allows (one on Redis), atomically per delivery with its effect. For each, in order: a
     * delivery that is not pending under {@code consumer} is {@code NOT_PENDING}; one that already
     * holds its admission (it was reclaimed after it was admitted: the slot follows the delivery) is
     * {@code RUN} without counting again; one whose concurrency limit has no free slot (or has
     * messages waiting for one, unless this message's turn came: {@link FlowLimit#TURN_HEADER}) is
     * acked and stored in the delayed set to wait for a slot ({@code WAIT_SLOT}); one over a rate
     * limit (unless {@link FlowLimit#RATE_ADMITTED_HEADER} says it was admitted for its attempt) takes
     * the next start the limit allows, and is acked and stored in the delayed set due then
     * ({@code WAIT_RATE}); otherwise it takes a slot of each concurrency limit, counts against each
     * rate limit, and is {@code RUN}. Waiting uses no attempt; a tracked job's record says SCHEDULED
     * with its due time. Every slot a delivery holds is released when its settlement is applied;
     * each release moves the oldest message waiting for that slot back to its queue.
     *
     * @throws UnsupportedOperationException when this broker has no flow control
     */
    default List<Admission> admit(String consumer, List<Admission.Request> requests) {
        throw new UnsupportedOperationException(getClass().getName() + " has no flow control (rate and concurrency limits)");
    }

    /**
     * How many concurrency slots of limit {@code limitId} of {@code queue} are held now (by running
     * or pending deliveries). For operators and tests.
     */
    default int slotsHeld(String queue, String limitId) {
        throw new UnsupportedOperationException(getClass().getName() + " has no flow control (rate and concurrency limits)");
    }

    /**
     * The limits set on each of {@code queues} ({@link #setQueueLimits}), one round trip for all on
     * Redis; a queue with none is left out. Workers read them at most every second, never per fetch.
     * None by default.
     */
    default Map<String, io.binomic.api.QueueLimits> queueLimits(List<String> queues) {
        return Map.of();
    }

    /**
     * Sets (or, with {@link io.binomic.api.QueueLimits#NONE}, removes) the limits of {@code queue},
     * durably; every worker applies them at its next read.
     *
     * @throws UnsupportedOperationException when this broker has no flow control
     */
    default void setQueueLimits(String queue, io.binomic.api.QueueLimits limits) {
        throw new UnsupportedOperationException(getClass().getName() + " has no flow control (rate and concurrency limits)");
    }

    // ---- Partitioned queues ----

    /**
     * The partitions of each of {@code queues} (logical queues) that has been split with
     * {@link #setPartitions}, one round trip for all on Redis; an unpartitioned queue is left out.
     * Producers and workers read them at most every second. None by default.
     */
    default Map<String, QueuePartitions> partitions(List<String> queues) {
        return Map.of();
    }

    /**
     * Stores the partitions of logical queue {@code queue}, durably (the core decides them: see
     * {@code Queues.setPartitions}), and prepares the physical queues of
     * {@link QueuePartitions#all} (streams, consumer groups). Every producer and worker applies
     * them at its next read (within about a second).
     *
     * @throws UnsupportedOperationException when this broker cannot partition queues
     */
    default void setPartitions(String queue, QueuePartitions partitions) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot partition queues");
    }

    // ---- Tracked jobs: records kept for messages with the Message.TRACK header ----
    //
    // enqueue and enqueueAll of a tracked message (and Scheduler.schedule and scheduleAll) also create
    // its record, in the same atomic step: {state: QUEUED (SCHEDULED with due for a scheduled one), task,
    // enqueuedAt, retention (the TRACK header)}, without expiry until the job ends. A message that is not tracked costs nothing more.

    /**
     * The record of job {@code id} of {@code queue}: its fields, or empty when there is none.
     *
     * @throws UnsupportedOperationException when this broker keeps no job records
     */
    default Optional<Map<String, String>> readJob(String queue, UUID id) {
        throw new UnsupportedOperationException(getClass().getName() + " keeps no job records");
    }

    /**
     * Marks jobs as started, in one round trip: each update is applied unless the job's record says
     * it ended or was cancelled (a missing record is created). A job whose record has
     * {@link JobRecords#CANCEL_REQUESTED} (a cancel asked while an earlier attempt ran on a worker
     * that then stopped) is ended CANCELLED instead, with its {@link JobEvent.Kind#ENDED} event. A
     * RUNNING record means the attempt it names never ended (its worker stopped): that attempt goes
     * into the history as {@code abandoned}. Returns the ids that were not applied: the worker does
     * not run those, and acks their deliveries.
     */
    default Set<UUID> startJobs(List<JobUpdate> starts) {
        throw new UnsupportedOperationException(getClass().getName() + " keeps no job records");
    }

    /**
     * Applies {@code update} to a job that is RUNNING (progress reports); does nothing otherwise.
     */
    default void updateRunningJob(JobUpdate update) {
        throw new UnsupportedOperationException(getClass().getName() + " keeps no job records");
    }

    /**
     * Cancels a job atomically. No record: {@code NOT_FOUND}. A final state: {@code ALREADY_ENDED}.
     * RUNNING: sets {@link JobRecords#CANCEL_REQUESTED}, publishes
     * {@link JobEvent.Kind#CANCEL_REQUESTED}, and returns {@code CANCEL_REQUESTED}. Otherwise
     * (QUEUED, SCHEDULED, RETRYING) applies {@code cancelled} (which sets state CANCELLED; the record
     * then expires after its {@link JobRecords#RETENTION}), publishes
     * {@link JobEvent.Kind#ENDED} and returns {@code CANCELLED}: a worker that fetches the message
     * later finds the record cancelled in {@link #startJobs} and never runs it.
     */
    default JobHandle.CancelOutcome cancelJob(JobUpdate cancelled) {
        throw new UnsupportedOperationException(getClass().getName() + " keeps no job records");
    }

    /**
     * Delivers the {@link JobEvent}s of {@code queue} to {@code listener} until the returned handle
     * is closed. Events published while a subscriber is disconnected are lost: a subscriber reads
     * the records it cares about after subscribing. {@code listener} must not block.
     */
    default AutoCloseable subscribeJobEvents(String queue, Consumer<JobEvent> listener) {
        throw new UnsupportedOperationException(getClass().getName() + " keeps no job records");
    }

    // ---- Flow control: unique jobs and debounce ----

    /**
     * Stores {@code message} (enqueued when {@code dueAt} is null, else scheduled for it, with its
     * job record when tracked) unless the key of its {@link UniqueClaim} is held; takes the key for
     * the claim's time-to-live in the same atomic step. Returns the id of the job that holds the key:
     * {@code message.id()} when it was stored, the earlier job's when it was a duplicate (nothing stored).
     *
     * @throws UnsupportedOperationException when this broker has no unique jobs
     */
    default UUID submitUnique(Message message, java.time.Instant dueAt) {
        throw new UnsupportedOperationException(getClass().getName() + " has no unique jobs");
    }

    /** {@link #submitUnique} for many messages, in order (a later one may be a duplicate of an earlier); brokers pipeline it. */
    default List<UUID> submitAllUnique(List<Message> messages, java.time.Instant dueAt) {
        return messages.stream().map(m -> submitUnique(m, dueAt)).toList();
    }

    /**
     * Schedules {@code message} for {@code dueAt} unless a job with the same debounce key
     * ({@link UniqueClaim#debounceKey}) of its queue and task is still waiting for its due time: that
     * job then takes {@code message}'s payload and headers and {@code dueAt}, and keeps its id and
     * record. A job that is already due (moved to its queue, running or ended) is not replaced: a
     * new one is scheduled. Returns the id of the job scheduled or replaced.
     *
     * @throws UnsupportedOperationException when this broker has no debounce
     */
    default UUID submitDebounced(Message message, java.time.Instant dueAt) {
        throw new UnsupportedOperationException(getClass().getName() + " has no debounce");
    }

    /**
     * Gives back the keys of {@link io.binomic.api.Uniqueness.Scope#WHILE_QUEUED} jobs a worker
     * starts (one round trip per call on Redis), each only if that job still holds it. Does nothing by default.
     */
    default void releaseUniqueAtStart(List<Message> started) {
    }

    // ---- Flow control: pause ----

    /**
     * What is paused on each of {@code queues} (one round trip on Redis). Workers call it at most
     * every 500 ms, never per fetch. Nothing is paused by default.
     */
    default Map<String, PauseState> pauseStates(List<String> queues) {
        Map<String, PauseState> none = new java.util.LinkedHashMap<>();
        queues.forEach(q -> none.put(q, PauseState.NONE));
        return none;
    }

    /**
     * Pauses {@code queue}, or only {@code task} of it; durable (it survives restarts). Idempotent.
     *
     * @throws UnsupportedOperationException when this broker cannot pause
     */
    default void pause(String queue, Optional<String> task) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot pause queues");
    }

    /**
     * Resumes {@code queue} (the queue-wide pause; tasks paused one by one stay paused), or only
     * {@code task}; the parked messages ({@link PauseState#PARKED_UNTIL}) that no pause holds any
     * more become due at once. Idempotent.
     *
     * @throws UnsupportedOperationException when this broker cannot pause
     */
    default void resume(String queue, Optional<String> task) {
        throw new UnsupportedOperationException(getClass().getName() + " cannot pause queues");
    }

    /**
     * Makes due at once the parked messages of {@code queue} that nothing paused holds any more,
     * without changing what is paused. A worker calls it when it sees a pause lifted, twice, a
     * refresh apart: a worker whose view was up to a refresh old may have parked a message again
     * just after the resume. Does nothing by default.
     */
    default void unpark(String queue) {
    }

    /** Releases connections. Idempotent. */
    @Override
    void close();
}
