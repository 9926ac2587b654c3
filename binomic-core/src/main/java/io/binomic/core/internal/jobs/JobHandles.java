package io.binomic.core.internal.jobs;

import io.binomic.api.BinomicException;
import io.binomic.api.BrokerException;
import io.binomic.api.JobCancelledException;
import io.binomic.api.JobFailedException;
import io.binomic.api.JobHandle;
import io.binomic.api.JobNotFoundException;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.JobTimeoutException;
import io.binomic.api.PayloadDecodeException;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.core.internal.Capabilities;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The job handles of one Binomic instance, and what completes their result futures: one
 * subscription to the broker's job events per queue (not a poll per job), opened when the first
 * result is awaited on that queue. After subscribing, each waiter reads its record once, so a job
 * that ended before the subscription is not missed.
 */
public final class JobHandles implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(JobHandles.class.getName());

    private final Broker broker;
    private final PayloadCodec codec;
    private final Clock clock;
    private final Map<String, AutoCloseable> subscriptions = new ConcurrentHashMap<>();
    /** One waiter per job and way of reading it: two handles of one job with other tasks or result types wait apart. */
    private final Map<WaiterKey, Waiter<?>> waiters = new ConcurrentHashMap<>();
    /** The waiters of each job, for its event. */
    private final Map<UUID, Set<Waiter<?>>> waitersById = new ConcurrentHashMap<>();

    private record WaiterKey(UUID id, String task, Class<?> resultType) { }
    private volatile boolean closed;
    private volatile Thread sweeper;

    /**
     * How often waiters are read again without an event. Pub/sub keeps nothing for a subscriber that
     * was disconnected (a Redis restart, a network cut): a job that ended meanwhile sends no second
     * event, so each waiter is read once per sweep until it completes. A slow safety net, not a poll:
     * events complete waiters in milliseconds.
     */
    static final Duration SWEEP_EVERY = Duration.ofSeconds(5);

    public JobHandles(Broker broker, PayloadCodec codec, Clock clock) {
        this.broker = broker;
        this.codec = codec;
        this.clock = clock;
    }

    /**
     * A handle on job {@code id} of {@code queue}, whose result decodes as {@code resultType}.
     *
     * @param task the task the caller believes the job is of, checked against the record; null when unknown
     */
    public <R> JobHandle<R> handle(String queue, UUID id, String task, Class<R> resultType, boolean tracked) {
        return handle(queue, id, task, resultType, tracked, null);
    }

    /**
     * {@link #handle(String, UUID, String, Class, boolean)} for a submit's job.
     *
     * @param mergedKey the key under which the submit found job {@code id}, stored before, instead of queueing its own; null
     *        when it queued its own ({@link JobHandle#mergedKey()})
     */
    public <R> JobHandle<R> handle(String queue, UUID id, String task, Class<R> resultType, boolean tracked, String mergedKey) {
        return new Handle<>(queue, id, task, resultType, tracked, mergedKey);
    }

    /** Starts the sweeper when the first result is awaited. */
    private void ensureSweeper() {
        if (sweeper == null) {
            synchronized (this) {
                if (sweeper == null && !closed) {
                    sweeper = Thread.ofVirtual().name("binomic-job-sweeper").start(this::sweep);
                }
            }
        }
    }

    private void sweep() {
        while (!closed) {
            try {
                Thread.sleep(SWEEP_EVERY);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            for (Waiter<?> waiter : List.copyOf(waiters.values())) {
                if (now - waiter.since >= SWEEP_EVERY.toNanos()) {
                    waiter.check();
                }
            }
        }
    }

    /** The status of job {@code id} of {@code queue}, {@link JobState#UNKNOWN} when there is no record. */
    public JobStatus status(String queue, UUID id) {
        return JobRecordFormat.read(queue, id, store().readJob(queue, id).orElse(JobRecord.NONE));
    }

    private JobStore store() {
        return Capabilities.require(broker, JobStore.class, "it keeps no job records, so a job's status cannot be read, waited for or cancelled");
    }

    private void subscribe(String queue) {
        subscriptions.computeIfAbsent(queue, q -> store().subscribeJobEvents(q, this::onEvent));
    }

    private void onEvent(JobEvent event) {
        if (event.kind() != JobEvent.Kind.ENDED) {
            return;
        }
        for (Waiter<?> waiter : waitersById.getOrDefault(event.id(), Set.of())) {
            // Off the broker's event thread: reading the record is a round trip.
            Thread.ofVirtual().name("binomic-job-result").start(waiter::check);
        }
    }

    @Override
    public void close() {
        closed = true;
        Thread s = sweeper;
        if (s != null) {
            s.interrupt();
        }
        for (AutoCloseable subscription : subscriptions.values()) {
            try {
                subscription.close();
            } catch (Exception e) {
                LOG.log(Level.DEBUG, "closing a job event subscription failed: {0}", e.getMessage());
            }
        }
        subscriptions.clear();
        for (Waiter<?> waiter : List.copyOf(waiters.values())) {
            waiter.future.completeExceptionally(new IllegalStateException("the Binomic instance was closed while waiting for job "
                    + waiter.handle.id + "; read it later with Binomic.job(id)"));
        }
    }

    /** One result future and the record it waits on. */
    private final class Waiter<R> {
        final Handle<R> handle;
        final CompletableFuture<R> future = new CompletableFuture<>();
        final long since = System.nanoTime();
        private boolean checkedOnce;

        Waiter(Handle<R> handle) {
            this.handle = handle;
        }

        void check() {
            if (future.isDone()) {
                return;
            }
            try {
                JobStatus status = handle.status();
                if (handle.task != null && !status.task().isEmpty() && !status.task().equals(handle.task)) {
                    fail(new IllegalArgumentException("job " + handle.id + " is of task '" + status.task() + "', not '" + handle.task
                            + "': get its handle with the task it was submitted with"));
                } else if (status.state().isFinal()) {
                    complete(status);
                } else if (status.state() == JobState.UNKNOWN && !checkedOnce) {
                    // The record is written with the message: none at the first look means none will come.
                    fail(new JobNotFoundException(handle.id, "no status is kept for job " + handle.id + " on queue '" + handle.queue
                            + "': a wrong id or queue, a task that is not tracked, or a status past its retention"));
                }
                checkedOnce = true;
            } catch (BrokerException e) {
                LOG.log(Level.WARNING, "reading job {0} failed: {1}; waiting for its next event", handle.id, e.getMessage());
            }
        }

        private void fail(RuntimeException e) {
            forget();
            future.completeExceptionally(e);
        }

        /** Out of the maps before the future completes: a later result() must start a fresh wait. */
        private void forget() {
            waiters.remove(handle.key(), this);
            waitersById.computeIfPresent(handle.id, (id, set) -> {
                set.remove(this);
                return set.isEmpty() ? null : set;
            });
        }

        private void complete(JobStatus status) {
            forget();
            switch (status.state()) {
                case SUCCEEDED -> {
                    var dropped = status instanceof RecordedJobStatus recorded ? recorded.resultDropped() : Optional.<String>empty();
                    if (dropped.isPresent() && handle.resultType != Void.class) {
                        future.completeExceptionally(new BinomicException("job " + handle.id + " of task '" + status.task()
                                + "' succeeded, but " + dropped.get()));
                        break;
                    }
                    try {
                        future.complete(decodeResult(status));
                    } catch (PayloadDecodeException | IllegalArgumentException e) {
                        future.completeExceptionally(new PayloadDecodeException("the result of job " + handle.id + " of task '"
                                + status.task() + "' does not decode as " + handle.resultType.getName() + " (" + e.getMessage()
                                + "): the worker's definition of the task returns another type; share one definition between"
                                + " producers and workers"));
                    }
                }
                case DEAD_LETTERED -> future.completeExceptionally(new JobFailedException(handle.id, "job " + handle.id + " of task '"
                        + status.task() + "' was dead-lettered (" + status.deadLetterReason().map(Enum::name).orElse("?") + ")"
                        + status.error().map(e -> ": " + e).orElse("") + "; see it with binomic dlq list"));
                case CANCELLED -> future.completeExceptionally(new JobCancelledException(handle.id, "job " + handle.id
                        + " of task '" + status.task() + "' was cancelled"));
                default -> { }
            }
        }

        private R decodeResult(JobStatus status) {
            if (handle.resultType == Void.class || status.result().isEmpty()) {
                return null;
            }
            return codec.decode(status.result().get().getBytes(StandardCharsets.UTF_8), handle.resultType);
        }
    }

    private final class Handle<R> implements JobHandle<R> {
        private final String queue;
        private final UUID id;
        private final String task;
        private final Class<R> resultType;
        private final boolean tracked;
        private final String mergedKey;

        Handle(String queue, UUID id, String task, Class<R> resultType, boolean tracked, String mergedKey) {
            this.queue = queue;
            this.id = id;
            this.task = task;
            this.resultType = resultType;
            this.tracked = tracked;
            this.mergedKey = mergedKey;
        }

        WaiterKey key() { return new WaiterKey(id, task, resultType); }

        @Override
        public UUID id() { return id; }

        @Override
        public String queue() { return queue; }

        @Override
        public JobStatus status() { return JobHandles.this.status(queue, id); }

        @Override
        public Optional<String> mergedKey() { return Optional.ofNullable(mergedKey); }

        @Override
        @SuppressWarnings("unchecked")
        public CompletableFuture<R> result() {
            if (!tracked) {
                throw new IllegalStateException("job " + id + " is of a task that is not tracked, so no result is kept:"
                        + " declare the task with a result type, or with .keepStatusFor(Duration)");
            }
            if (closed) {
                throw new IllegalStateException("the Binomic instance is closed");
            }
            Waiter<?> existing = waiters.computeIfAbsent(key(), k -> {
                Waiter<R> created = new Waiter<>(this);
                waitersById.computeIfAbsent(id, i -> ConcurrentHashMap.newKeySet()).add(created);
                return created;
            });
            subscribe(queue);
            ensureSweeper();
            existing.check();
            return ((Waiter<R>) existing).future.copy();
        }

        @Override
        public R await(Duration timeout) {
            try {
                return result().get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException e) {
                throw new JobTimeoutException(id, "job " + id + " did not end within " + timeout + "; it is "
                        + status().state() + " (it goes on: wait again, or cancel it)");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new JobTimeoutException(id, "interrupted while waiting for job " + id);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof RuntimeException r) {
                    throw r;
                }
                throw new IllegalStateException(e.getCause());
            }
        }

        @Override
        public CancelOutcome cancel() {
            return store().cancelJob(JobRecordFormat.cancelledBeforeStart(queue, id, clock.instant()));
        }

        @Override
        public String toString() { return "JobHandle[" + id + " on " + queue + "]"; }
    }
}
