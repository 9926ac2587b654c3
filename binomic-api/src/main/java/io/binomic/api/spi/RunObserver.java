package io.binomic.api.spi;

import io.binomic.api.TaskContext;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Sees every run of a handler in a worker: told before the handler runs, on the handler's own
 * thread around it, and once the worker has decided the run's outcome. It is the one hook an
 * integration module follows runs with without the core depending on it: a tracer's span around
 * the run, a metrics library's timer (the time from {@link Run#enter()} to its undo is the
 * handler's run time). Found with {@link ServiceLoader} by {@code Binomic.builder()} (declare it
 * with {@code provides io.binomic.api.spi.RunObserver with ...} and in {@code META-INF/services}):
 * every observer found is used; or given with {@code Binomic.Builder.runObserver}, which then
 * replaces those found; or added to a built client with {@code Binomic.addRunObserver}, beside
 * the others, for the runs that start from then on.
 *
 * <p>For each run an observer is told of, it is told in this order, each once: {@link #started},
 * then (when the handler is called) {@link Run#enter()} and its undo, then {@link Run#ended}.
 *
 * <p>Deliveries that never reach a handler (undecodable, unknown task, stale, attempt budget
 * spent before the run) are not runs and are not observed. An observer must be cheap and must
 * not throw: an exception it throws is logged and ignored, never the job's outcome.
 */
@FunctionalInterface
public interface RunObserver {

    /**
     * A run is about to start: its handler is bound to {@code job} and has not been called yet.
     * Called on the worker's thread, before the handler's own thread starts.
     *
     * @param job the run: task, queue, message id, attempt and the message's headers
     * @return what follows this one run to its end
     */
    Run started(TaskContext job);

    /** One run, from the moment before its handler is called to its decided outcome. */
    interface Run {

        /**
         * Called on the handler's own thread just before the handler, so that what the observer
         * makes current there (a tracing scope) is what the handler sees.
         *
         * @return run on the same thread once the handler returned or threw, to undo what this did
         */
        default Runnable enter() { return () -> { }; }

        /**
         * The worker decided how the run ends. Called once, after {@link #enter()}'s undo.
         *
         * @param outcome how the run ends
         * @param failure what the handler threw (or a {@link java.util.concurrent.TimeoutException}
         *                when it overran its timeout); empty when it returned
         */
        void ended(RunOutcome outcome, Optional<Throwable> failure);
    }

    /** How one run ended, as the worker settles it. */
    enum RunOutcome {
        /** The handler returned; the job is done. */
        SUCCEEDED,
        /** The handler failed or timed out and the job runs again after its backoff, as the next attempt. */
        RETRYING,
        /** The handler failed for good (non-retryable, or its last attempt): the job is in the dead-letter queue. */
        DEAD_LETTERED,
        /** Its submitter cancelled the job while it ran. */
        CANCELLED,
        /**
         * The worker's stop cut it off after its grace: the job is put back, due at once with its attempt unchanged (or,
         * when that cannot be written, stays pending and runs again after a reclaim). Also a run ended by a broker read
         * made for its handler ({@code TaskContext.dependency}, {@code TaskContext.batch}) that the broker did not
         * answer: put back, its attempt unchanged, to run again shortly.
         */
        LEFT_PENDING
    }
}
