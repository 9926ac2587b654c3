package io.binomic.core;

import io.binomic.api.BinomicConfig;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskRegistry;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SchedulerProvider;
import io.binomic.api.spi.TraceContextProvider;
import io.binomic.core.internal.PartitionRouter;
import io.binomic.core.internal.Providers;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.client.BatchSubmitter;
import io.binomic.core.internal.client.ClientContext;
import io.binomic.core.internal.client.JobLookup;
import io.binomic.core.internal.client.JobMessages;
import io.binomic.core.internal.client.LocalWorkers;
import io.binomic.core.internal.client.PeriodicFirer;
import io.binomic.core.internal.client.Submitter;
import io.binomic.core.internal.client.WorkflowSubmitter;
import io.binomic.core.internal.codec.ArgumentTypes;
import io.binomic.core.internal.codec.WorkerCodec;
import io.binomic.core.internal.jobs.JobHandles;
import io.binomic.core.internal.worker.RunObservers;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

/**
 * The parts of a {@link Binomic} instance, wired from its builder's settings: the providers (broker, codec, scheduler,
 * trace contexts, run observers) given or found, and the submitters, workers and lookups built on them. {@link Binomic}
 * is the public face over them and owns their start and close.
 */
final class BinomicParts {
    final BinomicConfig config;
    final TaskRegistry registry;
    final JobHandles jobs;
    final Broker broker;
    /** The scheduler given to the builder, if any; otherwise the provider that creates one for the started broker. */
    final Scheduler givenScheduler;
    final SchedulerProvider schedulerProvider;
    /** The broker's store of deferred work: DELAY submissions, retries, tick claims. Set by {@link Binomic#start()}. */
    volatile Scheduler scheduler;
    final Submitter submitter;
    final BatchSubmitter batches;
    final WorkflowSubmitter workflows;
    final PeriodicFirer periodic;
    final JobLookup lookup;
    final StatsRecorder stats = new StatsRecorder();
    final List<OutboxMonitor> outboxes = new CopyOnWriteArrayList<>();
    final LocalWorkers workers;
    final RunObservers runObservers;
    final DeadLetters deadLetters;
    final Queues queues;
    /** The partitions of partitioned queues: where a submit goes, what a worker reads. */
    final PartitionRouter partitions;
    final boolean prepareQueues;

    /**
     * @throws IllegalArgumentException when two tasks share a name, or a task's argument type cannot be decoded
     * @throws io.binomic.api.ProviderNotFoundException when no broker, codec or scheduler matches the configuration
     */
    BinomicParts(Binomic.Builder b) {
        this.config = b.config;
        this.registry = TaskRegistry.of(b.tasks);
        ArgumentTypes.requireDecodable(registry.all(), b.codec != null ? b.codec.id() : config.payloadCodec(),
                Providers.codecsById().keySet());
        Map<String, TaskBinding<?, ?>> handlers = Map.copyOf(b.handlers);
        Clock clock = b.clock;
        this.broker = b.broker != null ? b.broker : Providers.createBroker(config.broker());
        PayloadCodec codec = b.codec != null ? b.codec : Providers.selectCodec(config.payloadCodec());
        WorkerCodec workerCodec = new WorkerCodec(codec, Providers.codecsById());
        this.givenScheduler = b.scheduler;
        // Selected now, so a missing provider fails the build as a missing broker provider does.
        this.schedulerProvider = b.scheduler != null ? null : Providers.selectScheduler(config.broker(),
                Providers.load(SchedulerProvider.class, ServiceLoader.load(SchedulerProvider.class)));
        this.partitions = new PartitionRouter(broker);
        this.deadLetters = new DeadLetters(broker, registry, config.worker().queues(), partitions);
        this.queues = new Queues(broker, partitions, this::allQueues, () -> registry);
        this.prepareQueues = b.prepareQueues;
        this.jobs = new JobHandles(broker, workerCodec, clock);
        TraceContextProvider traceContexts = b.traceContextsGiven ? b.traceContexts : Providers.selectTraceContextProvider(
                Providers.load(TraceContextProvider.class, ServiceLoader.load(TraceContextProvider.class)));
        JobMessages messages = new JobMessages(codec, config.broker().maxPayloadBytes(), clock, traceContexts);
        this.runObservers = new RunObservers(b.runObserversGiven ? b.runObservers
                : Providers.load(RunObserver.class, ServiceLoader.load(RunObserver.class)).providers());
        ClientContext context = new ClientContext(broker, () -> scheduler, partitions, jobs, clock, runObservers);
        this.submitter = new Submitter(context, registry, messages);
        this.workers = new LocalWorkers(context, config, registry, handlers, workerCodec, stats);
        this.batches = new BatchSubmitter(context, messages, submitter, stats.flows(), workers::reads, config.broker().url());
        this.workflows = new WorkflowSubmitter(context, messages, submitter, stats.flows());
        this.periodic = new PeriodicFirer(clock, () -> scheduler, messages);
        this.lookup = new JobLookup(context);
    }

    /** The queues this instance knows: its tasks' and its worker's. */
    List<String> allQueues() {
        return Stream.concat(registry.queues().stream(), config.worker().queues().stream()).distinct().toList();
    }
}
