package io.binomic.core;

import io.binomic.api.DeadLetter;
import io.binomic.api.JobHandle;
import io.binomic.api.Message;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.memory.MemorySchedulerProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;

/** A broker that forwards every call to another: tests override the calls they want to break. */
public class ForwardingBroker implements Broker {
    protected final Broker delegate;

    public ForwardingBroker(Broker delegate) {
        this.delegate = delegate;
    }

    @Override
    public void start(List<String> queues) {
        delegate.start(queues);
    }

    /**
     * The scheduler of the memory broker this one forwards to, for {@link Binomic.Builder#scheduler}: a
     * scheduler shares its broker's store, and the memory scheduler serves only the memory broker itself.
     */
    public Scheduler scheduler() {
        return delegate instanceof ForwardingBroker forwarding ? forwarding.scheduler() : new MemorySchedulerProvider().create(delegate);
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
    public void renewLeases(String consumer, List<Delivery> inFlight) {
        delegate.renewLeases(consumer, inFlight);
    }

    @Override
    public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
        return delegate.reclaim(queue, consumer, minIdle, max);
    }

    @Override
    public Optional<DeadLetter> readDeadLetter(String queue, String deadLetterId) {
        return delegate.readDeadLetter(queue, deadLetterId);
    }

    @Override
    public List<DeadLetter> readDeadLetters(String queue, Optional<String> cursor, int count) {
        return delegate.readDeadLetters(queue, cursor, count);
    }

    @Override
    public int replayDeadLetters(String queue, List<String> deadLetterIds) {
        return delegate.replayDeadLetters(queue, deadLetterIds);
    }

    @Override
    public int deleteDeadLetters(String queue, List<String> deadLetterIds) {
        return delegate.deleteDeadLetters(queue, deadLetterIds);
    }

    @Override
    public QueueStats stats(String queue) {
        return delegate.stats(queue);
    }

    @Override
    public int removeIdleConsumers(String queue, Duration idle) {
        return delegate.removeIdleConsumers(queue, idle);
    }

    @Override
    public List<Delivery> pendingOf(String queue, String consumer, int max) {
        return delegate.pendingOf(queue, consumer, max);
    }

    @Override
    public long removeSettled(String queue) {
        return delegate.removeSettled(queue);
    }

    @Override
    public Optional<Map<String, String>> readJob(String queue, UUID id) {
        return delegate.readJob(queue, id);
    }

    @Override
    public Set<UUID> startJobs(List<JobUpdate> starts) {
        return delegate.startJobs(starts);
    }

    @Override
    public void updateRunningJob(JobUpdate update) {
        delegate.updateRunningJob(update);
    }

    @Override
    public JobHandle.CancelOutcome cancelJob(JobUpdate cancelled) {
        return delegate.cancelJob(cancelled);
    }

    @Override
    public AutoCloseable subscribeJobEvents(String queue, Consumer<JobEvent> listener) {
        return delegate.subscribeJobEvents(queue, listener);
    }

    @Override
    public void close() {
        delegate.close();
    }

    @Override
    public void addActivity(Map<String, List<io.binomic.api.spi.ActivityBucket>> byQueue) {
        delegate.addActivity(byQueue);
    }

    @Override
    public List<io.binomic.api.spi.ActivityBucket> activity(String queue, Instant since) {
        return delegate.activity(queue, since);
    }
}
