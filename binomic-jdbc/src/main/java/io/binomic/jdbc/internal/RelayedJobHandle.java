package io.binomic.jdbc.internal;

import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.JobTimeoutException;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The handle of a job written to the outbox: its id and queue are known at once, and the broker is
 * asked only when the handle is used, so that writing the row never waits on the broker. Until a
 * relay has stored the job the broker has no record of it, which a plain handle takes for a wrong
 * id: this one waits for the record first (its status reads UNKNOWN meanwhile), then hands over to
 * the plain handle, which waits for the job's end and reports it.
 */
public final class RelayedJobHandle<R> implements JobHandle<R> {
    /** The longest pause between two reads of a job not relayed yet: the delay a relay adds to a result at worst. */
    private static final long MAX_PAUSE_MS = 500;

    private final Binomic binomic;
    private final Task<?, R> task;
    private final UUID id;
    private volatile JobHandle<R> resolved;
    /** Set once the broker has a record of the job: from then on the plain handle answers. */
    private volatile boolean stored;

    public RelayedJobHandle(Binomic binomic, Task<?, R> task, UUID id) {
        this.binomic = binomic;
        this.task = task;
        this.id = id;
    }

    private JobHandle<R> resolved() {
        JobHandle<R> h = resolved;
        if (h == null) {
            h = binomic.job(task, id);
            resolved = h;
        }
        return h;
    }

    @Override
    public UUID id() {
        return id;
    }

    @Override
    public String queue() {
        return task.queue();
    }

    @Override
    public JobStatus status() {
        return resolved().status();
    }

    /** Completes once the job ends; before the relay stored it, reads its status every while until it has a record. */
    @Override
    public CompletableFuture<R> result() {
        if (stored || !task.isTracked()) {
            return resolved().result(); // an untracked task's handle says why it has no result
        }
        CompletableFuture<R> result = new CompletableFuture<>();
        Thread.ofVirtual().name("binomic-outbox-job-" + id).start(() -> {
            try {
                if (awaitRecord(() -> result.isDone() ? 0 : Long.MAX_VALUE)) {
                    resolved().result().whenComplete((r, e) -> {
                        if (e != null) {
                            result.completeExceptionally(e);
                        } else {
                            result.complete(r);
                        }
                    });
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                result.cancel(false);
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /**
     * Waits for the relay, then lets the plain handle wait for the job's end in the time left, and
     * report a failure or a cancel as it does for any job.
     */
    @Override
    public R await(Duration timeout) {
        if (stored || !task.isTracked()) {
            return resolved().await(timeout); // an untracked task's handle says why it cannot wait
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            if (!awaitRecord(() -> deadline - System.nanoTime())) {
                // A job not relayed yet has no record in the broker, so a cancel would find nothing to cancel.
                throw new JobTimeoutException(id, "job " + id + " did not end within " + timeout + "; it is " + JobState.UNKNOWN
                        + " (its outbox row is not relayed yet: is a relay running, and was the transaction committed?)"
                        + " (it goes on: wait again)");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new JobTimeoutException(id, "interrupted while waiting for job " + id);
        }
        try {
            return resolved().await(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        } catch (JobTimeoutException e) {
            if (Thread.currentThread().isInterrupted()) {
                throw e;
            }
            // The plain handle had only the time the relay left: the caller's timeout is the one to name.
            throw new JobTimeoutException(id, "job " + id + " did not end within " + timeout + "; it is " + status().state()
                    + " (it goes on: wait again, or cancel it)");
        }
    }

    /**
     * Reads the job's status, pausing longer each time, until the broker has a record of it (true) or no time is
     * {@code left} (false, once it gives 0 or less nanoseconds).
     */
    private boolean awaitRecord(LongSupplier left) throws InterruptedException {
        long pause = 10;
        while (resolved().status().state() == JobState.UNKNOWN) {
            long nanos = left.getAsLong();
            if (nanos <= 0) {
                return false;
            }
            Thread.sleep(Math.min(pause, TimeUnit.NANOSECONDS.toMillis(nanos) + 1));
            pause = Math.min(MAX_PAUSE_MS, pause * 2);
        }
        stored = true;
        return true;
    }

    /** Before a relay stored the job the broker has no record to cancel: NOT_FOUND, and the job still runs once relayed. */
    @Override
    public CancelOutcome cancel() {
        return resolved().cancel();
    }

    @Override
    public String toString() {
        return "JobHandle[" + task.queue() + "/" + id + ", in the outbox until relayed]";
    }
}
