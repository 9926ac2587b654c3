package io.binomic.bench;

import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * A broker that forwards every call, and every capability, to another: the benchmarks and the
 * integration tests override the calls they time or break, and nothing else.
 */
public class ForwardingBroker implements Broker {
    protected final Broker delegate;

    public ForwardingBroker(Broker delegate) {
        this.delegate = delegate;
    }

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
    public int removeIdleConsumers(String queue, String consumer, Duration idle) {
        return delegate.removeIdleConsumers(queue, consumer, idle);
    }

    @Override
    public boolean removeConsumer(String queue, String consumer) { return delegate.removeConsumer(queue, consumer); }

    @Override
    public boolean hasBeenRead(String queue) { return delegate.hasBeenRead(queue); }

    @Override
    public <T> Optional<T> capability(Class<T> type) { return delegate.capability(type); }

    @Override
    public void close() { delegate.close(); }
}
