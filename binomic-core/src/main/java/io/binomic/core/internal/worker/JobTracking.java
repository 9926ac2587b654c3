package io.binomic.core.internal.worker;

import io.binomic.api.BatchStatus;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.Workflows;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.JobUpdate;
import io.binomic.core.internal.Capabilities;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Predicate;

/** What the delivery state machine needs to keep a tracked job's record and to honour a cancel. */
public interface JobTracking {

    /** The name the worker's records give (its consumer name). */
    String worker();

    /** Marks a job started; false when its record says it was cancelled or has ended (do not run it). */
    boolean start(JobUpdate started);

    void progress(JobUpdate progress);

    /** The largest result, encoded, a job record keeps (the broker's payload limit). */
    default int maxResultBytes() {
        return Integer.MAX_VALUE;
    }

    /** True when a cancel was asked for the delivery with this key ({@code Delivery.key()}) while it ran. */
    boolean cancelRequested(String key);

    /**
     * True once the worker is stopping: an interrupt then may be its own (after the grace), and a
     * handler it ended is left pending for reclaim instead of failing. False when there is no worker.
     */
    default boolean workerStopping() {
        return false;
    }

    /**
     * True when another worker took over the delivery with this key while it ran here (its lease
     * lapsed): an interrupt then is the worker stopping the run, which is left to the new owner.
     */
    default boolean leaseLost(String key) {
        return false;
    }

    /**
     * Asked just before the handler of {@code delivery} is called: false when it is no longer this
     * worker's to run (held up on its way there past half a lease, and taken over by another worker
     * meanwhile). True when there is no worker.
     */
    default boolean stillOursToRun(Delivery delivery) {
        return true;
    }

    /**
     * Asked just before the handler of {@code delivery} is called, after {@link #stillOursToRun}: true
     * when a rate limit admitted it for a start now past by more than a worker may start late (it
     * gives the start back instead). False when there is no worker.
     */
    default boolean lateForItsStart(Delivery delivery) {
        return false;
    }

    /** The status of batch {@code id}, for a handler's {@code TaskContext.batch()}; empty when the broker keeps no batches. */
    default Optional<BatchStatus> batch(UUID id) { return Optional.empty(); }

    /** The status of workflow {@code id}, for a handler's {@code TaskContext.dependency}; empty when the broker keeps none. */
    default Optional<WorkflowStatus> workflow(UUID id) { return Optional.empty(); }

    /** The record of job {@code id} of {@code queue}; empty when there is none or the broker keeps no records. */
    default Optional<JobRecord> record(String queue, UUID id) { return Optional.empty(); }

    /** The handler of this delivery starts on the calling thread: from now a cancel may interrupt it. */
    default void handlerStarted(String key) { }

    /**
     * The handler ended: a cancel no longer interrupts this thread (its outcome is being recorded),
     * and an interrupt a cancel sent just before is cleared.
     */
    default void handlerEnded(String key) { }

    /** Tracking through {@code broker}, for the worker named {@code worker}. */
    static JobTracking through(Broker broker, String worker, Predicate<String> cancelRequested) {
        return through(broker, worker, cancelRequested, null, Integer.MAX_VALUE);
    }

    /** Tracking through {@code broker}, telling {@code handlers} when a handler may be interrupted by a cancel. */
    static JobTracking through(Broker broker, String worker, Predicate<String> cancelRequested, WorkerHooks handlers,
                               int maxResultBytes) {
        Optional<JobStore> store = broker.capability(JobStore.class);
        if (store.isEmpty()) {
            System.getLogger(JobTracking.class.getName()).log(Level.WARNING, "worker {0}: {1}", worker, Capabilities.missing(broker, JobStore.class,
                    "tracked jobs run, but their status and results are not kept"));
        }
        WorkerHooks hooks = handlers != null ? handlers : new WorkerHooks() { };
        Optional<Batches> batches = broker.capability(Batches.class);
        Optional<Workflows> workflows = broker.capability(Workflows.class);
        return new JobTracking() {
            @Override
            public Optional<BatchStatus> batch(UUID id) { return batches.flatMap(b -> b.readBatch(id)); }

            @Override
            public Optional<WorkflowStatus> workflow(UUID id) { return workflows.flatMap(w -> w.readWorkflow(id)); }

            @Override
            public Optional<JobRecord> record(String queue, UUID id) { return store.flatMap(s -> s.readJob(queue, id)); }

            @Override
            public int maxResultBytes() { return maxResultBytes; }

            @Override
            public void handlerStarted(String key) { hooks.started(key, Thread.currentThread()); }

            @Override
            public void handlerEnded(String key) {
                hooks.ended(key);
                if (handlers != null && cancelRequested.test(key)) {
                    Thread.interrupted(); // a cancel that came as the handler ended: its outcome stands
                }
            }

            @Override
            public String worker() { return worker; }

            @Override
            public boolean workerStopping() { return hooks.stopping(); }

            @Override
            public boolean leaseLost(String key) { return hooks.leaseLost(key); }

            @Override
            public boolean stillOursToRun(Delivery delivery) { return hooks.stillOursToRun(delivery); }

            @Override
            public boolean lateForItsStart(Delivery delivery) { return hooks.lateForItsStart(delivery); }

            @Override
            public boolean start(JobUpdate started) {
                Boolean inBatch = hooks.startedWithItsFetch(started.id());
                if (inBatch != null) {
                    return inBatch;
                }
                return store.isEmpty() || !store.get().startJobs(List.of(started)).contains(started.id());
            }

            @Override
            public void progress(JobUpdate progress) { store.ifPresent(s -> s.updateRunningJob(progress)); }

            @Override
            public boolean cancelRequested(String key) { return cancelRequested.test(key); }
        };
    }

    /** What the worker keeps for tracking: the threads a cancel may interrupt, and the jobs it marked started in bulk. */
    interface WorkerHooks {
        default void started(String key, Thread thread) { }

        default void ended(String key) { }

        /**
         * Whether job {@code id} was marked started with the rest of its fetch (true: run it; false:
         * cancelled or ended, do not), taking the answer; null when it was not, and must be marked alone.
         */
        default Boolean startedWithItsFetch(UUID id) {
            return null;
        }

        default boolean stopping() {
            return false;
        }

        default boolean leaseLost(String key) {
            return false;
        }

        default boolean stillOursToRun(Delivery delivery) {
            return true;
        }

        default boolean lateForItsStart(Delivery delivery) {
            return false;
        }
    }
}
