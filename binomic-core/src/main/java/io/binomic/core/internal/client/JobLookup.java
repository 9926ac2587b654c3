package io.binomic.core.internal.client;

import io.binomic.api.spi.JobStore;
import io.binomic.api.JobHandle;
import io.binomic.api.Task;
import io.binomic.api.spi.QueuePartitions;
import java.util.List;
import java.util.UUID;

/**
 * Finds the handle of a job by its id, from any process: it owns the search for the partition
 * holding a job's record, which a submit never needs since its handle names its partition.
 */
public final class JobLookup {
    private final ClientContext context;

    public JobLookup(ClientContext context) { this.context = context; }

    /** The handle of job {@code id} of {@code task}. */
    public <R> JobHandle<R> job(Task<?, R> task, UUID id) {
        return context.jobs().handle(partitionOf(task.queue(), id), id, task.name(), task.resultType(), true);
    }

    /** The handle of job {@code id} of {@code queue}, its result read as JSON text. */
    public JobHandle<String> job(String queue, UUID id) {
        return new JsonResultHandle(context.jobs().handle(partitionOf(queue, id), id, null, Void.class, true), null);
    }

    /**
     * The handle of job {@code id}: on the first of {@code queues} (their partitions) that has a
     * record of it, else on the first queue.
     *
     * @throws IllegalStateException when {@code queues} is empty
     */
    public JobHandle<String> job(List<String> queues, UUID id) {
        if (queues.isEmpty()) {
            throw new IllegalStateException("this instance knows no queue to look for job " + id + " in: use job(queue, id)");
        }
        for (String queue : context.partitions().physical(queues)) {
            if (context.broker().capability(JobStore.class).flatMap(store -> store.readJob(queue, id)).isPresent()) {
                return new JsonResultHandle(context.jobs().handle(queue, id, null, Void.class, true), null);
            }
        }
        return job(queues.getFirst(), id);
    }

    /**
     * The physical queue holding the record of job {@code id} of {@code queue}: the queue itself
     * unless it is partitioned, else the partition that has the record (the queue when none has).
     */
    private String partitionOf(String queue, UUID id) {
        QueuePartitions p = context.partitions().of(queue);
        if (!p.partitioned()) {
            return queue;
        }
        for (String partition : p.all(queue)) {
            if (context.broker().capability(JobStore.class).flatMap(store -> store.readJob(partition, id)).isPresent()) {
                return partition;
            }
        }
        return queue;
    }
}
