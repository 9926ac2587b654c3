package io.binomic.testsupport;

import io.binomic.api.DeadLetter;
import io.binomic.api.JobHandle;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.DeadLetterStore;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PendingDeliveries;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.SettledCleanup;
import io.binomic.api.spi.Settlement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * A broker that forwards every call to another: tests override the calls they want to break or time, benchmarks the
 * calls they time. The capabilities it forwards itself (dead letters, jobs, activity, pending deliveries, settled
 * entries) are answered by this broker, when the delegate has them, so that overriding one of their calls takes
 * effect; any other is the delegate's own ({@link #otherCapability}). {@code renewLeases} is left to its default, so
 * that it goes through {@link #renewLeasesReportingLost} here.
 */
public class ForwardingBroker implements Broker, DeadLetterStore, JobStore, Activity, PendingDeliveries, SettledCleanup {
    protected final Broker delegate;

    public ForwardingBroker(Broker delegate) {
        this.delegate = delegate;
    }

    @Override
    public void start(List<String> queues) {
        delegate.start(queues);
    }

    @Override
    public void enqueue(Message message) {
        delegate.enqueue(message);
    }

    @Override
    public void enqueueAll(List<Message> messages) {
        delegate.enqueueAll(messages);
    }

    @Override
    public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
        return delegate.fetch(queues, consumer, max, wait);
    }

    @Override
    public SettleReport settle(String consumer, List<Settlement> settlements) {
        return delegate.settle(consumer, settlements);
    }

    @Override
    public SettleReport settle(String consumer, List<Settlement> settlements, java.util.Map<String, Integer> handOff) {
        return delegate.settle(consumer, settlements, handOff);
    }

    @Override
    public List<Delivery> renewLeasesReportingLost(String consumer, List<Delivery> inFlight) {
        return delegate.renewLeasesReportingLost(consumer, inFlight);
    }

    @Override
    public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
        return delegate.reclaim(queue, consumer, minIdle, max);
    }

    @Override
    public Optional<DeadLetter> readDeadLetter(String queue, String deadLetterId) {
        return delegate.capability(DeadLetterStore.class).orElseThrow().readDeadLetter(queue, deadLetterId);
    }

    @Override
    public List<DeadLetter> readDeadLetters(String queue, Optional<String> cursor, int count) {
        return delegate.capability(DeadLetterStore.class).orElseThrow().readDeadLetters(queue, cursor, count);
    }

    @Override
    public int replayDeadLetters(String queue, List<String> deadLetterIds) {
        return delegate.capability(DeadLetterStore.class).orElseThrow().replayDeadLetters(queue, deadLetterIds);
    }

    @Override
    public int deleteDeadLetters(String queue, List<String> deadLetterIds) {
        return delegate.capability(DeadLetterStore.class).orElseThrow().deleteDeadLetters(queue, deadLetterIds);
    }

    @Override
    public QueueStats stats(String queue) {
        return delegate.stats(queue);
    }

    @Override
    public QueueStats statsOnce(String queue, Duration bound) {
        return delegate.statsOnce(queue, bound);
    }

    @Override
    public int removeIdleConsumers(String queue, String consumer, Duration idle) {
        return delegate.removeIdleConsumers(queue, consumer, idle);
    }

    @Override
    public boolean removeConsumer(String queue, String consumer) {
        return delegate.removeConsumer(queue, consumer);
    }

    @Override
    public boolean hasBeenRead(String queue) {
        return delegate.hasBeenRead(queue);
    }

    @Override
    public List<Delivery> pendingOf(String queue, String consumer, int max) {
        return delegate.capability(PendingDeliveries.class).orElseThrow().pendingOf(queue, consumer, max);
    }

    @Override
    public long removeSettled(String queue) {
        return delegate.capability(SettledCleanup.class).orElseThrow().removeSettled(queue);
    }

    @Override
    public Optional<JobRecord> readJob(String queue, UUID id) {
        return delegate.capability(JobStore.class).orElseThrow().readJob(queue, id);
    }

    @Override
    public Set<UUID> startJobs(List<JobUpdate> starts) {
        return delegate.capability(JobStore.class).orElseThrow().startJobs(starts);
    }

    @Override
    public void updateRunningJob(JobUpdate update) {
        delegate.capability(JobStore.class).orElseThrow().updateRunningJob(update);
    }

    @Override
    public JobHandle.CancelOutcome cancelJob(JobUpdate cancelled) {
        return delegate.capability(JobStore.class).orElseThrow().cancelJob(cancelled);
    }

    @Override
    public AutoCloseable subscribeJobEvents(String queue, Consumer<JobEvent> listener) {
        return delegate.capability(JobStore.class).orElseThrow().subscribeJobEvents(queue, listener);
    }

    /** The capabilities of the delegate, those this class forwards answered by this broker itself. */
    @Override
    public <T> Optional<T> capability(Class<T> type) {
        if (type.isInstance(this)) {
            return delegate.capability(type).map(ignored -> type.cast(this));
        }
        return otherCapability(type);
    }

    /**
     * A capability this class does not forward: the delegate's own, whose calls do not pass through this broker. A
     * test that must see every call overrides this to offer none.
     */
    protected <T> Optional<T> otherCapability(Class<T> type) {
        return delegate.capability(type);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public void addActivity(Map<String, List<ActivityBucket>> byQueue) {
        delegate.capability(Activity.class).orElseThrow().addActivity(byQueue);
    }

    @Override
    public List<ActivityBucket> activity(String queue, Instant since) {
        return delegate.capability(Activity.class).orElseThrow().activity(queue, since);
    }
}
