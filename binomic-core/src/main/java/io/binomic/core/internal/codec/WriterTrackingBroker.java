package io.binomic.core.internal.codec;

import io.binomic.api.DeadLetter;
import io.binomic.api.Message;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * The broker a worker reads through: every call goes to the real broker unchanged; the
 * deliveries of {@link #fetch} and {@link #reclaim} are shown to the {@link WorkerCodec} first,
 * so that it decodes each payload with the codec that wrote it.
 */
final class WriterTrackingBroker implements Broker {
    private final Broker broker;
    private final WorkerCodec codec;

    WriterTrackingBroker(Broker broker, WorkerCodec codec) {
        this.broker = broker;
        this.codec = codec;
    }

    @Override
    public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
        return codec.noteWriters(broker.fetch(queues, consumer, max, wait));
    }

    @Override
    public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
        return codec.noteWriters(broker.reclaim(queue, consumer, minIdle, max));
    }

    @Override
    public void start(List<String> queues) {
        broker.start(queues);
    }

    @Override
    public void enqueue(Message message) {
        broker.enqueue(message);
    }

    @Override
    public void enqueueAll(List<Message> messages) {
        broker.enqueueAll(messages);
    }

    @Override
    public void schedule(Message message, Instant dueAt) {
        broker.schedule(message, dueAt);
    }

    @Override
    public void scheduleAll(List<Message> messages, Instant dueAt) {
        broker.scheduleAll(messages, dueAt);
    }

    @Override
    public void ack(List<Delivery> deliveries) {
        broker.ack(deliveries);
    }

    @Override
    public void retryLater(Delivery delivery, Message next, Instant dueAt) {
        broker.retryLater(delivery, next, dueAt);
    }

    @Override
    public void deadLetter(Delivery delivery, DeadLetter.Failure failure) {
        broker.deadLetter(delivery, failure);
    }

    @Override
    public void renewLeases(String consumer, List<Delivery> inFlight) {
        broker.renewLeases(consumer, inFlight);
    }

    @Override
    public int moveDue(String queue, Instant now, int max) {
        return broker.moveDue(queue, now, max);
    }

    @Override
    public Optional<Instant> nextDue(String queue) {
        return broker.nextDue(queue);
    }

    @Override
    public boolean claimTick(String queue, String jobName, Instant tick) {
        return broker.claimTick(queue, jobName, tick);
    }

    @Override
    public List<DeadLetter> readDeadLetters(String queue, Optional<String> cursor, int count) {
        return broker.readDeadLetters(queue, cursor, count);
    }

    @Override
    public int replayDeadLetters(String queue, List<String> deadLetterIds) {
        return broker.replayDeadLetters(queue, deadLetterIds);
    }

    @Override
    public int deleteDeadLetters(String queue, List<String> deadLetterIds) {
        return broker.deleteDeadLetters(queue, deadLetterIds);
    }

    @Override
    public QueueStats stats(String queue) {
        return broker.stats(queue);
    }

    @Override
    public int removeIdleConsumers(String queue, Duration idle) {
        return broker.removeIdleConsumers(queue, idle);
    }

    @Override
    public void close() {
        broker.close();
    }
}
