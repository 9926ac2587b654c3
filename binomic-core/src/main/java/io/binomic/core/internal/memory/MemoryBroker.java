package io.binomic.core.internal.memory;

import io.binomic.api.BrokerConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.Message;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** The embedded broker. TODO: implementation in progress. */
public final class MemoryBroker implements Broker {
    public MemoryBroker(BrokerConfig config) { }
    @Override public void start(List<String> queues) { }
    @Override public void enqueue(Message message) { throw new UnsupportedOperationException(); }
    @Override public void enqueueAll(List<Message> messages) { throw new UnsupportedOperationException(); }
    @Override public void schedule(Message message, Instant dueAt) { throw new UnsupportedOperationException(); }
    @Override public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) { throw new UnsupportedOperationException(); }
    @Override public void ack(List<Delivery> deliveries) { throw new UnsupportedOperationException(); }
    @Override public void retryLater(Delivery delivery, Message next, Instant dueAt) { throw new UnsupportedOperationException(); }
    @Override public void deadLetter(Delivery delivery, DeadLetter.Failure failure) { throw new UnsupportedOperationException(); }
    @Override public void renewLeases(String consumer, List<Delivery> inFlight) { throw new UnsupportedOperationException(); }
    @Override public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) { throw new UnsupportedOperationException(); }
    @Override public int moveDue(String queue, Instant now, int max) { throw new UnsupportedOperationException(); }
    @Override public Optional<Instant> nextDue(String queue) { throw new UnsupportedOperationException(); }
    @Override public boolean claimTick(String queue, String jobName, Instant tick) { throw new UnsupportedOperationException(); }
    @Override public List<DeadLetter> readDeadLetters(String queue, Optional<String> cursor, int count) { throw new UnsupportedOperationException(); }
    @Override public int replayDeadLetters(String queue, List<String> deadLetterIds) { throw new UnsupportedOperationException(); }
    @Override public int deleteDeadLetters(String queue, List<String> deadLetterIds) { throw new UnsupportedOperationException(); }
    @Override public QueueStats stats(String queue) { throw new UnsupportedOperationException(); }
    @Override public int removeIdleConsumers(String queue, Duration idle) { throw new UnsupportedOperationException(); }
    @Override public void close() { }
}
