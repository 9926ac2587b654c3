package io.binomic.core.internal.client;

import io.binomic.api.BinomicConfig;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskRegistry;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Worker;
import io.binomic.core.internal.ActivityFlusher;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.codec.WorkerCodec;
import io.binomic.core.internal.worker.WorkerRuntime;
import io.binomic.core.internal.worker.WorkerServices;
import io.binomic.core.internal.worker.WorkerTasks;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The workers a client runs in its own JVM: refuses one that would read a queue it has no
 * handler for, starts each with the client's broker and scheduler, sends their counts to the
 * broker's per-minute activity, and stops them all when the client closes.
 */
public final class LocalWorkers implements AutoCloseable {
    private final ClientContext context;
    private final BinomicConfig config;
    private final TaskRegistry registry;
    private final Map<String, TaskBinding<?, ?>> handlers;
    private final WorkerCodec codec;
    private final StatsRecorder stats;
    private final List<WorkerRuntime> workers = new CopyOnWriteArrayList<>();
    /** Sends the workers' counts to the broker's per-minute activity; started with the first worker. */
    private ActivityFlusher activity;

    public LocalWorkers(ClientContext context, BinomicConfig config, TaskRegistry registry, Map<String, TaskBinding<?, ?>> handlers,
                        WorkerCodec codec, StatsRecorder stats) {
        this.context = context;
        this.config = config;
        this.registry = registry;
        this.handlers = handlers;
        this.codec = codec;
        this.stats = stats;
    }

    /**
     * Starts a worker with {@code workerConfig}, on its queues, else those of the registered tasks.
     *
     * @throws IllegalStateException when it would read no queue, or a queue with a task it has no handler for
     */
    public Worker start(WorkerConfig workerConfig) {
        List<String> queues = workerConfig.queues().isEmpty() ? registry.queues() : workerConfig.queues();
        if (queues.isEmpty()) {
            throw new IllegalStateException("the worker has no queue to read: bind handlers or set WorkerConfig.queues");
        }
        List<String> missing = registry.all().stream().filter(task -> queues.contains(task.queue()) && !handlers.containsKey(task.name()))
                .map(task -> task.name() + " (queue " + task.queue() + ")").toList();
        if (!missing.isEmpty()) {
            throw new IllegalStateException("the worker reads queues " + queues + " but has no handler for task(s) " + missing
                    + ": bind each with Binomic.builder().handle(task, handler) (or a TaskProvider), or leave its queue out of"
                    + " WorkerConfig.queues");
        }
        WorkerRuntime worker = new WorkerRuntime(workerConfig,
                new WorkerTasks(queues, config.taskDefaults(), handlers, codec, config.broker().maxPayloadBytes()),
                new WorkerServices(context.broker(), context.scheduler().get(), context.partitions(), context.clock(), stats,
                        context.runObservers()));
        workers.add(worker);
        synchronized (this) {
            if (activity == null) {
                activity = ActivityFlusher.start(stats, context.broker(), context.clock());
            }
        }
        worker.start();
        return worker;
    }

    /**
     * Whether a worker of this instance that has not stopped reads {@code queue} (a task's queue, or
     * one of its partitions): known here before the worker's first fetch makes it a consumer the
     * broker counts.
     */
    public boolean reads(String queue) { return workers.stream().anyMatch(w -> !w.isStopped() && w.reads(queue)); }

    public List<Worker> running() { return workers.stream().filter(w -> !w.isStopped()).map(w -> (Worker) w).toList(); }

    /** Stops every worker, each with its shutdown grace, then the activity counts. */
    @Override
    public synchronized void close() {
        workers.forEach(WorkerRuntime::close);
        if (activity != null) {
            activity.close();
        }
    }
}
