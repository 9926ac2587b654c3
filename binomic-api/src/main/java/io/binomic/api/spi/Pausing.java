package io.binomic.api.spi;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A {@link Broker} capability: durable pauses of a queue or of one task of it. Without it nothing
 * is ever paused, and pausing is refused.
 */
public interface Pausing {

    /**
     * What is paused on each of {@code queues} (one round trip on Redis). Workers call it at most
     * every 500 ms, never per fetch.
     */
    Map<String, PauseState> pauseStates(List<String> queues);

    /** Pauses {@code queue}, or only {@code task} of it; durable (it survives restarts). Idempotent. */
    void pause(String queue, Optional<String> task);

    /**
     * Resumes {@code queue} (the queue-wide pause; tasks paused one by one stay paused), or only
     * {@code task}; the parked messages ({@link PauseState#PARKED_UNTIL}) that no pause holds any
     * more become due at once. Idempotent.
     */
    void resume(String queue, Optional<String> task);

    /**
     * Makes due at once the parked messages of {@code queue} that nothing paused holds any more,
     * without changing what is paused. A worker calls it when it sees a pause lifted, twice, a
     * refresh apart: a worker whose view was up to a refresh old may have parked a message again
     * just after the resume.
     */
    void unpark(String queue);

    /**
     * How many messages of {@code queue} are parked ({@link PauseState#PARKED_UNTIL}): held by a pause of
     * the queue or of their task, in the delayed set, until resumed. They are among
     * {@link io.binomic.api.QueueStats#delayed()}, which counts them as waiting for a due time they do not have.
     * None by default, for a broker that cannot tell.
     */
    default long parked(String queue) {
        return 0;
    }
}
