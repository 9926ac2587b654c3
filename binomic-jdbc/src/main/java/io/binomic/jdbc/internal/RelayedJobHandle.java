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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The handle of a job written to the outbox: its id and queue are known at once, and the broker is
 * asked only when the handle is used, so that writing the row never waits on the broker. Until a
 * relay has stored the job the broker has no record of it, which a plain handle takes for a wrong
 * id: this one waits for the record first (its status reads UNKNOWN meanwhile), then behaves as a
 * plain handle.
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
        Thread.ofVirtual().name("binomic-outbox-job-" + id).start(() -> waitForRecord(result));
        return result;
    }

    private void waitForRecord(CompletableFuture<R> result) {
        long pause = 10;
        try {
            while (!result.isDone() && resolved().status().state() == JobState.UNKNOWN) {
                Thread.sleep(pause);
                pause = Math.min(MAX_PAUSE_MS, pause * 2);
            }
            if (!result.isDone()) {
                stored = true;
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
    }

    @Override
    public R await(Duration timeout) {
        CompletableFuture<R> result = result();
        try {
            return result.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            result.cancel(false); // ends the reads of a job not relayed yet
            JobState state = status().state();
            // A job not relayed yet has no record in the broker, so a cancel would find nothing to cancel.
            throw new JobTimeoutException(id, "job " + id + " did not end within " + timeout + "; it is " + state
                    + (state == JobState.UNKNOWN ? " (its outbox row is not relayed yet: is a relay running, and was the"
                    + " transaction committed?) (it goes on: wait again)" : " (it goes on: wait again, or cancel it)"));
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
