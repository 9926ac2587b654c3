package io.binomic.api.spi;

import io.binomic.api.BrokerException;
import io.binomic.api.QueueStats;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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
 * of the same kind), which puts it back on its queue when it is due. A {@link Settlement.DeadLetter}
 * is kept, atomically with the ack, until an operator replays or deletes it. A lease renewal
 * ({@link #renewLeasesReportingLost}) is fenced the same way, and reports the deliveries the
 * consumer lost.
 *
 * <p>Every other feature is a capability, an interface of its own that says what it guarantees,
 * found with {@link #capability}: a broker implements only what it can keep, and the core treats a
 * missing capability as the feature being off (nothing paused, no limits, no job records), or
 * refuses the one call that needs it with a message naming the capability and the broker.
 */
public interface Broker extends AutoCloseable {

    /**
     * Connects and prepares the given queues (streams, consumer groups). Fails fast with a
     * {@link BrokerException}. An empty list connects without creating anything:
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
     * @throws BrokerException when the broker cannot be reached; the caller keeps the
     *         settlements and sends them again (a settlement that did land the first time is then
     *         reported {@linkplain SettleReport#notPending() not pending}, and changes nothing)
     */
    SettleReport settle(String consumer, List<Settlement> settlements);

    /**
     * {@link #settle(String, List)}, and, per queue of {@code handOff}, up to that many new deliveries of
     * the queue handed to {@code consumer} in the same call ({@link SettleReport#handed}): admitted onto
     * the slots of the queue's own concurrency limit that the applied settlements freed, so a freed slot
     * is taken again without a fetch and an admission of its own. A consumer asks only for a queue whose
     * jobs carry no limit but the queue's concurrency limit. A broker may hand out fewer, or none (the
     * default).
     */
    default SettleReport settle(String consumer, List<Settlement> settlements, Map<String, Integer> handOff) {
        return settle(consumer, settlements);
    }

    /**
     * Resets the idle time of deliveries {@code consumer} still holds (running, or finished but not
     * yet settled), so they are not reclaimed, and says which of {@code inFlight} were not renewed
     * because {@code consumer} no longer holds them (another consumer reclaimed them, or they are no
     * longer pending). Fenced like {@link #settle}: a delivery another consumer took over is left
     * alone. Required, not a capability: a broker that fences renewals knows which it did not renew,
     * and the worker relies on the answer to stop running what another worker may run now (without it,
     * two workers would run the same job until the first one's settlement is refused).
     *
     * @return the deliveries of {@code inFlight} not renewed, as they were passed in; empty when all were
     */
    List<Delivery> renewLeasesReportingLost(String consumer, List<Delivery> inFlight);

    /** {@link #renewLeasesReportingLost}, for a caller that does not need to know which were lost. */
    default void renewLeases(String consumer, List<Delivery> inFlight) {
        renewLeasesReportingLost(consumer, inFlight);
    }

    /**
     * Takes over up to {@code max} deliveries of {@code queue} idle for at least {@code minIdle}
     * (their owner stopped renewing), for {@code consumer}. Their {@link Delivery#deliveryCount()}
     * is incremented, so {@link Delivery#attempt()} is one higher than before.
     */
    List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max);

    /** Counts of the queue. */
    QueueStats stats(String queue);

    /**
     * {@link #stats}, asked once and given at most {@code bound}: no retry, for a caller whose use of
     * the answer is advice (a warning after a submit that succeeded) not worth waiting out a broker's
     * retries for. Fails with a {@link BrokerException} when the broker did not answer within
     * {@code bound}. By default {@link #stats}: a broker whose stats read is not sent over a network
     * (in memory) has nothing to retry; one that retries or may block overrides this.
     */
    default QueueStats statsOnce(String queue, Duration bound) {
        return stats(queue);
    }

    /**
     * Records that {@code consumer}, the caller, is alive on {@code queue}, and removes the
     * consumers of {@code queue} that hold nothing pending and whose worker neither read nor made
     * this call for {@code idle} (a worker that stopped or died); returns how many. The caller is
     * never removed, and is registered again if it was. A live worker calls this well within
     * {@code idle}, whether or not it reads: a consumer waiting on an empty queue is alive, even
     * where the broker's own idle time for it keeps growing (Redis before 7.2).
     */
    int removeIdleConsumers(String queue, String consumer, Duration idle);

    /**
     * Removes {@code consumer}, a worker that stops, from the consumers of {@code queue} when it holds nothing
     * pending there, so that {@link #stats} counts it no more; returns whether it did. A consumer that holds
     * deliveries is kept, with them, for reclaim (on Redis, {@code XGROUP DELCONSUMER} would drop its pending
     * entries); {@link #removeIdleConsumers} takes it once it holds nothing and is idle. What the queue is keeps
     * (on Redis, its consumer group): {@link #hasBeenRead} stays true. By default nothing is removed.
     */
    default boolean removeConsumer(String queue, String consumer) {
        return false;
    }

    /**
     * Whether a worker has read {@code queue} on this broker, now or before, even if nothing of it is left that
     * {@link #stats} counts (on Redis: its consumer group exists). Asking creates nothing. By default whether
     * {@link #stats} counts a consumer.
     */
    default boolean hasBeenRead(String queue) {
        return stats(queue).consumers() > 0;
    }

    /**
     * The capability {@code type} of this broker ({@link JobStore}, {@link DeadLetterStore},
     * {@link FlowLimits}, {@link FlowLimitReadings}, {@link UniqueSubmits}, {@link Pausing}, {@link Partitioning},
     * {@link Activity}, {@link PendingDeliveries}, {@link SettledCleanup}, {@link BrokerHealthReport}, {@link Batches}, {@link Workflows}, or a type of the broker's
     * own), or empty when it has none. The answer does not change while the broker is open: the core
     * asks once, and keeps what it got. By default this broker itself, when it implements
     * {@code type}.
     */
    default <T> Optional<T> capability(Class<T> type) {
        return type.isInstance(this) ? Optional.of(type.cast(this)) : Optional.empty();
    }

    /** Releases connections. Idempotent. */
    @Override
    void close();
}
