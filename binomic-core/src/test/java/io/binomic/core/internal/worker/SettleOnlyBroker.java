package io.binomic.core.internal.worker;

import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/** A broker that only settles, as {@code settle} says: for tests of the {@link Settler} alone. */
record SettleOnlyBroker(Function<List<Settlement>, SettleReport> settle) implements Broker {
    @Override public SettleReport settle(String consumer, List<Settlement> settlements) { return settle.apply(settlements); }

    @Override public void start(List<String> queues) { throw new UnsupportedOperationException(); }

    @Override public void enqueue(Message message) { throw new UnsupportedOperationException(); }

    @Override public void enqueueAll(List<Message> messages) { throw new UnsupportedOperationException(); }

    @Override
    public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) {
        throw new UnsupportedOperationException();
    }

    @Override
    public List<Delivery> renewLeasesReportingLost(String consumer, List<Delivery> inFlight) {
        throw new UnsupportedOperationException();
    }

    @Override
    public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
        throw new UnsupportedOperationException();
    }

    @Override public QueueStats stats(String queue) { throw new UnsupportedOperationException(); }

    @Override
    public int removeIdleConsumers(String queue, String consumer, Duration idle) { throw new UnsupportedOperationException(); }

    @Override public void close() { }
}
