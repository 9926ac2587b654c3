package io.binomic.core.internal.worker;

import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobStore;
import io.binomic.core.internal.Capabilities;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * Hears the cancels of tracked jobs (the broker's job events, {@link JobStore#subscribeJobEvents}) and asks the runs
 * they are for to stop: their handlers are interrupted.
 */
final class CancelListener implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CancelListener.class.getName());

    private final WorkerContext context;
    private final TrackedJobs tracked;
    /** The keys of the running deliveries of a job. */
    private final Function<UUID, List<String>> runningOf;
    private final List<AutoCloseable> subscriptions = new CopyOnWriteArrayList<>();

    CancelListener(WorkerContext context, TrackedJobs tracked, Function<UUID, List<String>> runningOf) {
        this.context = context;
        this.tracked = tracked;
        this.runningOf = runningOf;
    }

    /** Listens for cancels of the jobs of {@code queues}, when the worker runs tracked jobs and the broker keeps records. */
    void listen(List<String> queues) {
        if (!tracked.enabled()) {
            return;
        }
        JobStore store = context.broker().capability(JobStore.class).orElse(null);
        if (store == null) {
            LOG.log(Level.DEBUG, "worker {0}: {1}", context.consumerName(),
                    Capabilities.missing(context.broker(), JobStore.class, "running jobs cannot be cancelled"));
            return;
        }
        for (String queue : queues) {
            try {
                subscriptions.add(store.subscribeJobEvents(queue, this::onJobEvent));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: cannot listen for job cancels on queue {1}: {2}", context.consumerName(), queue,
                        e.getMessage());
            }
        }
    }

    /** Asks the running delivery of the job a cancel is for, if any, to stop: its handler is interrupted. */
    private void onJobEvent(JobEvent event) {
        if (event.kind() != JobEvent.Kind.CANCEL_REQUESTED) {
            return;
        }
        tracked.requestCancelBeforeRun(event.id()); // before the running ones: see there why
        for (String key : runningOf.apply(event.id())) {
            LOG.log(Level.INFO, "worker {0}: cancelling running job {1} as asked", context.consumerName(), event.id());
            tracked.requestCancel(key);
        }
    }

    /** Stops listening for cancels. */
    @Override
    public void close() {
        for (AutoCloseable subscription : subscriptions) {
            try {
                subscription.close();
            } catch (Exception e) {
                LOG.log(Level.DEBUG, "worker {0}: closing a job event subscription failed: {1}", context.consumerName(), e.getMessage());
            }
        }
    }
}
