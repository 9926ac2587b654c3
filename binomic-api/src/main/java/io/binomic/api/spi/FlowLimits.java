package io.binomic.api.spi;

import io.binomic.api.QueueLimits;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A {@link Broker} capability: rate and concurrency limits of queues, decided atomically with
 * the deliveries they hold back. Without it a queue has no limits: setting one is refused, and
 * every delivery runs.
 */
public interface FlowLimits {

    /**
     * The flow-control decision for deliveries {@code consumer} holds, in as few round trips as the
     * broker allows (one on Redis), atomically per delivery with its effect. For each, in order: a
     * delivery that is not pending under {@code consumer} is {@code NOT_PENDING}; one that already
     * holds its admission (it was reclaimed after it was admitted: the slot follows the delivery) is
     * {@code RUN} without counting again; one whose concurrency limit has no free slot is acked and
     * stored in the delayed set to wait for a slot ({@code WAIT_SLOT}), in a line ordered by priority,
     * then by arrival, in which one whose turn came ({@link FlowLimit#TURN_HEADER}) but that found the
     * slot taken goes ahead of those that joined after it. A free slot goes to the delivery that finds
     * it, whether messages wait for one or not (the one moved back for it may be behind a backlog on
     * the queue, and the slot must not idle meanwhile); one over a rate
     * limit (unless {@link FlowLimit#RATE_ADMITTED_HEADER} says it was admitted for its attempt) takes
     * the next start the limit allows, and is acked and stored in the delayed set due then
     * ({@code WAIT_RATE}); otherwise it takes a slot of each concurrency limit, counts against each
     * rate limit, and is {@code RUN}. Waiting uses no attempt; a tracked job's record says SCHEDULED
     * with its due time. Every slot a delivery holds is released when its settlement is applied;
     * each release moves the oldest message waiting for that slot back to its queue.
     *
     * <p>A delivery's queue limits are those set when it is decided on ({@link #setQueueLimits}), in
     * place of any the request names under {@link FlowLimit#QUEUE_LIMIT_ID}: a caller's view of them
     * may be old, and a change must decide on the next delivery. A rate limit whose interval differs
     * from the one its state was spaced with (a task's limit changed in code) respaces the starts and
     * turns it handed out at the new interval.
     */
    List<Admission> admit(String consumer, List<Admission.Request> requests);

    /**
     * {@link #admit(String, List)}, for a caller that can keep a delivery up to {@code maxHold} and
     * start it then: one over a rate limit whose next start the limit allows within {@code maxHold}
     * gets that start reserved, is admitted (its slots taken, its rate limits counting it at that
     * start) and is {@code HOLD} with the wait; one that waits longer goes to the delayed set as
     * {@code WAIT_RATE}, due a little before its turn (so that it is back, and held, when its turn
     * comes). The reserved starts of all callers together keep every limit. A broker that cannot
     * reserve starts decides as {@link #admit(String, List)} does (this default).
     */
    default List<Admission> admit(String consumer, List<Admission.Request> requests, Duration maxHold) {
        return admit(consumer, requests);
    }

    /**
     * How many concurrency slots of limit {@code limitId} of {@code queue} are held now (by running
     * or pending deliveries). For operators and tests. A broker may admit under a queue's own limit
     * ({@link FlowLimit#QUEUE_LIMIT_ID}) without taking a slot while the limit cannot bind (Redis does,
     * while no more entries are pending in the queue than it allows): those are not counted here.
     */
    int slotsHeld(String queue, String limitId);

    /**
     * The limits set on each of {@code queues} ({@link #setQueueLimits}), one round trip for all on
     * Redis; a queue with none is left out. Workers read them at most every second, never per fetch.
     */
    Map<String, QueueLimits> queueLimits(List<String> queues);

    /**
     * Sets (or, with {@link QueueLimits#NONE}, removes) the limits of {@code queue}, durably; every
     * admission decides under them from then on, and a worker whose tasks declare no limit starts
     * asking for admissions at its next read of them.
     */
    void setQueueLimits(String queue, QueueLimits limits);
}
