package io.binomic.core.internal.worker;

import io.binomic.core.internal.Capabilities;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.JobEvent;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Listens for cancels of the jobs a worker may run, one subscription per queue it reads: a
 * running job asked to cancel is interrupted here, in whichever process submitted the cancel. It
 * runs on the broker's listener threads, not a loop of the worker's.
 */
final class CancelListener implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CancelListener.class.getName());

    private final String consumerName;
    private final Broker broker;
    private final Dispatcher dispatcher;
    private final List<AutoCloseable> jobEventSubscriptions = new CopyOnWriteArrayList<>();

    CancelListener(WorkerContext context, Dispatcher dispatcher) {
        this.consumerName = context.consumerName();
        this.broker = context.broker();
        this.dispatcher = dispatcher;
    }

    void subscribe(List<String> queues) {
        JobStore store = broker.capability(JobStore.class).orElse(null);
        if (store == null) {
            LOG.log(Level.DEBUG, "worker {0}: {1}", consumerName, Capabilities.missing(broker, JobStore.class, "running jobs cannot be cancelled"));
            return;
        }
        for (String queue : queues) {
            try {
                jobEventSubscriptions.add(store.subscribeJobEvents(queue, this::onJobEvent));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: cannot listen for job cancels on queue {1}: {2}", consumerName, queue, e.getMessage());
            }
        }
    }

    private void onJobEvent(JobEvent event) {
        if (event.kind() != JobEvent.Kind.CANCEL_REQUESTED) {
            return;
        }
        dispatcher.cancelJob(event.id());
    }

    @Override
    public void close() {
        for (AutoCloseable subscription : jobEventSubscriptions) {
            try {
                subscription.close();
            } catch (Exception e) {
                LOG.log(Level.DEBUG, "worker {0}: closing a job event subscription failed: {1}", consumerName, e.getMessage());
            }
        }
    }
}
