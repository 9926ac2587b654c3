package io.binomic.it;

import io.binomic.api.BrokerException;
import io.binomic.api.JobHandle;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.time.Duration;
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
final class FirstStartMarkFailsBroker implements Broker, JobStore {
    private final Broker delegate;
    private final JobStore jobs;
    private final AtomicInteger startMarks = new AtomicInteger();

    FirstStartMarkFailsBroker(Broker delegate) {
        this.delegate = delegate;
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

    @Override
    public void start(List<String> queues) { delegate.start(queues); }

    @Override
    public void enqueue(Message message) { delegate.enqueue(message); }

    @Override
    public void enqueueAll(List<Message> messages) { delegate.enqueueAll(messages); }

    @Override
    public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
        return delegate.fetch(queues, consumer, max, wait);
    }

    @Override
    public SettleReport settle(String consumer, List<Settlement> settlements) { return delegate.settle(consumer, settlements); }

    @Override
    public List<Delivery> renewLeasesReportingLost(String consumer, List<Delivery> inFlight) {
        return delegate.renewLeasesReportingLost(consumer, inFlight);
    }

    @Override
    public void renewLeases(String consumer, List<Delivery> inFlight) { delegate.renewLeases(consumer, inFlight); }

    @Override
    public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
        return delegate.reclaim(queue, consumer, minIdle, max);
    }

    @Override
    public QueueStats stats(String queue) { return delegate.stats(queue); }

    @Override
    public QueueStats statsOnce(String queue, Duration bound) { return delegate.statsOnce(queue, bound); }

    @Override
    public int removeIdleConsumers(String queue, String consumer, Duration idle) { return delegate.removeIdleConsumers(queue, consumer, idle); }

    @Override
    public void close() { delegate.close(); }
}
