package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.ProviderNotFoundException;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.Message;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Codec selection with binomic-redis (and so Jackson) on the path, on the memory broker: the
 * codec is the one the configuration names, never the one that happens to be present, and each
 * message is decoded with the codec that wrote it.
 */
class CodecSelectionIT {
    public record Reminder(String text, Optional<Instant> at) { }

    public record Link(String name, URI target) { }

    private final List<Binomic> opened = new ArrayList<>();
    private final List<String> codecs = new CopyOnWriteArrayList<>();
    private final List<Object> ran = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
    }

    private static Broker memoryBroker() {
        return ServiceLoader.load(BrokerProvider.class).stream().map(ServiceLoader.Provider::get)
                .filter(p -> p.id().equals("memory")).findFirst().orElseThrow().create(BrokerConfig.defaults());
    }

    /** A handler that records the codec of each message it runs, and its argument. */
    private <A> TaskBinding<A, Void> recording(Task<A, Void> task) {
        return task.handledBy(argument -> {
            codecs.add(TaskContext.current().headers().get(Message.CODEC));
            ran.add(argument);
            return null;
        });
    }

    /** A started instance on {@code broker}; it runs the tasks of {@code bindings} (a producer binds none). */
    private Binomic start(BinomicConfig.Builder config, Broker broker, TaskBinding<?, ?>... bindings) {
        WorkerConfig worker = WorkerConfig.builder().pollTimeout(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(2)).build();
        Binomic.Builder builder = Binomic.builder().config(config.worker(worker).build()).broker(broker);
        for (TaskBinding<?, ?> binding : bindings) {
            builder.handle(binding);
        }
        Binomic binomic = builder.build().start();
        opened.add(binomic);
        return binomic;
    }

    private static void await(String what, java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(10);
        }
    }

    @Test
    void jacksonOnThePathDoesNotSwitchTheMemoryBrokerAwayFromTheJdkCodec() throws Exception {
        Task<Reminder, Void> remind = Task.builder("remind", Reminder.class).build();
        Binomic binomic = start(BinomicConfig.builder(), memoryBroker(), recording(remind));
        Worker worker = binomic.startWorker();
        Reminder reminder = new Reminder("call", Optional.of(Instant.parse("2026-12-01T09:00:00Z")));

        binomic.submit(remind, reminder);

        await("the reminder ran", () -> worker.counters().succeeded() == 1);
        assertEquals(List.of("json-jdk"), codecs);
        assertEquals(List.of(reminder), ran);
    }

    @Test
    void jacksonIsUsedWhenTheConfigurationNamesItAndHandlesOptional() throws Exception {
        Task<Reminder, Void> remind = Task.builder("remind", Reminder.class).build();
        Binomic binomic = start(BinomicConfig.builder().payloadCodec("jackson"), memoryBroker(), recording(remind));
        Worker worker = binomic.startWorker();
        Reminder reminder = new Reminder("call", Optional.empty());

        binomic.submit(remind, reminder);

        await("the reminder ran", () -> worker.counters().succeeded() == 1);
        assertEquals(List.of("jackson"), codecs);
        assertEquals(List.of(reminder), ran);
    }

    @Test
    void anAbsentCodecIsAnErrorListingEveryCodecFound() {
        BinomicConfig config = BinomicConfig.builder().payloadCodec("gson").build();
        var e = assertThrows(ProviderNotFoundException.class, () -> Binomic.builder().config(config).build());
        assertEquals("""
                no payload codec with id 'gson' (BinomicConfig.payloadCodec): add the module that provides it, or choose one of the codecs found:
                  jackson: io.binomic.redis.internal.JacksonPayloadCodec in the classpath
                  json-jdk: io.binomic.core.internal.codec.JdkJsonCodec in the classpath""", e.getMessage());
    }

    @Test
    void aWorkerDecodesEachMessageWithTheCodecThatWroteIt() throws Exception {
        // Only Jackson knows java.net.URI: a worker decoding it with its own JDK codec would fail.
        Task<Link, Void> link = Task.builder("link", Link.class).build();
        Broker shared = memoryBroker();
        Binomic producer = start(BinomicConfig.builder().payloadCodec("jackson"), shared); // submits without the handler
        Binomic consumer = start(BinomicConfig.builder(), shared, recording(link));
        Worker worker = consumer.startWorker();
        Link target = new Link("docs", URI.create("https://example.com/docs"));

        producer.submit(link, target);

        await("the link ran", () -> worker.counters().succeeded() == 1);
        assertEquals(List.of("jackson"), codecs);
        assertEquals(List.of(target), ran);
        assertTrue(consumer.queueStats("default").deadLetters() == 0);
    }
}
