package io.binomic.api.spi;

import java.time.Instant;
import java.util.Set;

/**
 * What is paused on one queue: the whole queue, and tasks of it. A worker fetches nothing from a
 * paused queue, and parks the messages of a paused task it fetched ({@link #PARKED_UNTIL}).
 *
 * @param queuePaused the whole queue is paused
 * @param pausedTasks tasks paused one by one (whatever the queue's state)
 */
public record PauseState(boolean queuePaused, Set<String> pausedTasks) {

    /** Nothing paused. */
    public static final PauseState NONE = new PauseState(false, Set.of());

    /**
     * The due time of a parked message: a worker that fetched a message of a paused queue or task
     * settles it as a {@link Settlement.RetryLater} due then, with its attempt unchanged (no attempt
     * used, nothing failed); {@link Pausing#resume} makes the parked messages of what it resumes due
     * at once. Far enough that nothing else is ever due then, exact as a Redis sorted-set score.
     */
    public static final Instant PARKED_UNTIL = Instant.ofEpochMilli(8_000_000_000_000_000L);

    public PauseState {
        pausedTasks = Set.copyOf(pausedTasks);
    }

    /** True when messages of {@code task} must not run: its queue or the task is paused. */
    public boolean pauses(String task) { return queuePaused || pausedTasks.contains(task); }

    /** True when nothing is paused. */
    public boolean isEmpty() { return !queuePaused && pausedTasks.isEmpty(); }
}
