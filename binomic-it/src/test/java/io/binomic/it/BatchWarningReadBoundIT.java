package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.Task;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.core.BatchBuilder;
import io.binomic.core.Binomic;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A batch submit whose write succeeded, Redis frozen (SIGSTOP) right after that write returned,
 * returns well within one command timeout: what is left of it, reading whether a worker reads each
 * of its queues, is only for a warning, and is asked once, within a short bound. Sent as every
 * other call, each read waits a command timeout per try, and Redisson tries again many times.
 * Not a speed bound: the submit must not wait out even one command timeout for a warning.
 */
class BatchWarningReadBoundIT {
    /** Three times the consumers reads' bound (1 s): a loaded machine's delays stay well inside. */
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(3);

    @Test
    void aBatchSubmitWhoseWriteSucceededDoesNotWaitOutRedisRetriesForItsUnreadQueueWarnings() {
        String run = UUID.randomUUID().toString().substring(0, 8);
        Task<String, Void> onA = task("warn-a", run);
        Task<String, Void> onB = task("warn-b", run);
        Task<String, Void> callback = task("warn-callback", run);
        try (RedisServer redis = RedisServer.startNew()) {
            AtomicBoolean armed = new AtomicBoolean();
            AtomicBoolean frozen = new AtomicBoolean();
            Broker broker = freezingAfterBatchWrite(Brokers.redis(redis, b -> b.commandTimeout(COMMAND_TIMEOUT)), redis, armed, frozen);
            BinomicConfig config = BinomicConfig.builder().broker(BrokerConfig.builder().url(redis.url()).commandTimeout(COMMAND_TIMEOUT)
                    .build()).schedulePeriodicTasks(false).build();
            try (Binomic client = Binomic.builder().config(config).broker(broker).build().start()) {
                // connected and the batch scripts loaded: what the second submit waits for is its own (its partitions read, its write, its reads)
                batch(client, onA, onB, callback).submit();
                BatchBuilder batch = batch(client, task("warn-a2", run), task("warn-b2", run), task("warn-callback2", run));
                armed.set(true);
                long start = System.nanoTime();
                try {
                    batch.submit();
                } finally {
                    if (frozen.get()) {
                        redis.thaw();
                    }
                }
                Duration took = Duration.ofNanos(System.nanoTime() - start);
                System.out.println("batch submit, Redis frozen after its write: returned after " + took.toMillis() + " ms");
                assertTrue(frozen.get(), "Redis was not frozen after the batch's write");
                assertTrue(took.compareTo(COMMAND_TIMEOUT) < 0, "the submit returned " + took.toMillis() + " ms after it started,"
                        + " Redis frozen after its write: not within one command timeout (" + COMMAND_TIMEOUT.toMillis() + " ms)");
                assertTrue(client.batch(batch.id()).status().isPresent(), "the batch was not stored");
            }
        }
    }

    /** A task on a queue of its own, which no worker reads: each submit reads its consumers to warn of that. */
    private static Task<String, Void> task(String name, String run) {
        return Task.builder(name, String.class).queue(name + "-" + run).build();
    }

    private static BatchBuilder batch(Binomic client, Task<String, Void> a, Task<String, Void> b, Task<String, Void> callback) {
        return client.batch().add(a, "one").add(b, "two").onSuccess(callback, "done");
    }

    /**
     * {@code redis}'s broker, whose {@link Batches#submitBatch}, once {@code armed}, freezes Redis
     * when the write has returned; every other call is the broker's own.
     */
    private static Broker freezingAfterBatchWrite(Broker delegate, RedisServer redis, AtomicBoolean armed, AtomicBoolean frozen) {
        Batches batches = forwarding(Batches.class, delegate.capability(Batches.class).orElseThrow(), (method, result) -> {
            if (method.getName().equals("submitBatch") && armed.get() && !frozen.getAndSet(true)) {
                redis.freeze();
            }
        });
        return (Broker) Proxy.newProxyInstance(Broker.class.getClassLoader(), new Class<?>[] {Broker.class}, (proxy, method, args) -> {
            if (method.getName().equals("capability") && args[0] == Batches.class) {
                return Optional.of(batches);
            }
            return invoke(delegate, method, args);
        });
    }

    private interface After {
        void returned(Method method, Object result);
    }

    private static <T> T forwarding(Class<T> type, T delegate, After after) {
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
            Object result = invoke(delegate, method, args);
            after.returned(method, result);
            return result;
        }));
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
