package io.binomic.it;

import io.binomic.api.BrokerException;
import io.binomic.api.JobHandle;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.JobUpdate;
import io.binomic.testsupport.ForwardingBroker;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A Redis broker whose first start mark ({@link JobStore#startJobs}) fails as a Redis that did not
 * answer in time, without reaching Redis; every other call, and every other capability, is the
 * broker's own.
 */
final class FirstStartMarkFailsBroker extends ForwardingBroker implements JobStore {
    private final JobStore jobs;
    private final AtomicInteger startMarks = new AtomicInteger();

    FirstStartMarkFailsBroker(Broker delegate) {
        super(delegate);
        this.jobs = delegate.capability(JobStore.class).orElseThrow();
    }

    /** How many start marks the worker asked for, the failed one included. */
    int startMarks() { return startMarks.get(); }

    @Override
    public Set<UUID> startJobs(List<JobUpdate> starts) {
        if (startMarks.incrementAndGet() == 1) {
            throw new BrokerException("Redis did not answer the start mark in time");
        }
        return jobs.startJobs(starts);
    }

    @Override
    public <T> Optional<T> capability(Class<T> type) {
        return type == JobStore.class ? Optional.of(type.cast(this)) : delegate.capability(type);
    }

    @Override
    public Optional<JobRecord> readJob(String queue, UUID id) { return jobs.readJob(queue, id); }

    @Override
    public void updateRunningJob(JobUpdate update) { jobs.updateRunningJob(update); }

    @Override
    public JobHandle.CancelOutcome cancelJob(JobUpdate cancelled) { return jobs.cancelJob(cancelled); }

    @Override
    public AutoCloseable subscribeJobEvents(String queue, Consumer<JobEvent> listener) { return jobs.subscribeJobEvents(queue, listener); }
}
