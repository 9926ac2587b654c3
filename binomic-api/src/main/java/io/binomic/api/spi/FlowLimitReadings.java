package io.binomic.api.spi;

import java.util.List;
import java.util.Map;

/**
 * A {@link Broker} capability beside {@link FlowLimits}: what a queue's limits hold now, for
 * operators (the dashboard, {@code /metrics}). Only reads, each of them small (on Redis a pipeline of
 * {@code ZCARD} and {@code HMGET} over the queue's own keys, which a reader ACL user may make): never
 * a scan, so it costs the same however many jobs wait. A broker without it shows limits without
 * their state.
 */
public interface FlowLimitReadings {

    /**
     * What one limit holds now.
     *
     * @param slotsHeld slots of a concurrency limit held now, as {@link FlowLimits#slotsHeld} counts
     *     them (deliveries a broker admitted under the queue's own limit without a slot, while it
     *     could not bind, are not counted); 0 for a rate limit
     * @param waitingForSlot messages waiting in the delayed set for a slot of the limit (the length of its
     *     line: one cancelled while it waits counts until its turn comes)
     * @param waitingForRate starts and turns the rate limit handed out that have not come yet: about as
     *     many jobs wait for their start under it, held by a worker or in the delayed set (starts taken
     *     at once from its burst count for an interval); 0 for a concurrency limit
     */
    record Reading(long slotsHeld, long waitingForSlot, long waitingForRate) {
        /** Nothing held, nothing waiting: a limit the broker keeps no state for. */
        public static final Reading IDLE = new Reading(0, 0, 0);

        /**
         * {@code waitingForRate} of a rate limit kept as a GCRA time {@code tat} (the start after the
         * last one it admitted) and {@code nextTurn} (the turn after the last one it handed out), the
         * starts and turns one {@code interval} apart (all in µs): how many of them are after
         * {@code now}. Starts taken at once from its burst count for an interval.
         */
        public static long turnsAhead(long tat, long nextTurn, long interval, long now) {
            long last = Math.max(tat, nextTurn) - interval;
            return interval <= 0 || last <= now ? 0 : Math.ceilDiv(last - now, interval);
        }
    }

    /**
     * The state of each limit of {@code queue} whose id is in {@code limitIds} ({@link FlowLimit#id()},
     * such as {@link FlowLimit#QUEUE_LIMIT_ID}), in one round trip; a limit that holds nothing is
     * {@link Reading#IDLE}.
     */
    Map<String, Reading> read(String queue, List<String> limitIds);
}
