package io.binomic.jdbc.internal;

import io.binomic.api.JobHandle;
import io.binomic.api.JobStatus;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * The handle of a job written to the outbox: its id and queue are known at once, and the broker is
 * asked only when the handle is used, so that writing the row never waits on the broker.
 */
public final class RelayedJobHandle<R> implements JobHandle<R> {
    private final Binomic binomic;
    private final Task<?, R> task;
    private final UUID id;
    private volatile JobHandle<R> resolved;

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

    @Override
    public CompletableFuture<R> result() {
        return resolved().result();
    }

    @Override
    public R await(Duration timeout) {
        return resolved().await(timeout);
    }

    @Override
    public CancelOutcome cancel() {
        return resolved().cancel();
    }

    @Override
    public String toString() {
        return "JobHandle[" + task.queue() + "/" + id + ", in the outbox until relayed]";
    }
}
