package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.PayloadDecodeException;
import io.binomic.api.ProviderNotFoundException;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Message;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The payload codec end to end on the in-memory broker ({@code memory://}): which codec is used,
 * that a message records it, and that a payload that does not fit the task's argument record is
 * a {@code DECODE_ERROR} dead letter naming the field, never a handler run with nulls and zeros.
 */
class PayloadCodecWorkerTest {
    public record Job(String queue, int n) { }

    public record Reminder(String text, Optional<Instant> at) { }

    private final List<Binomic> opened = new ArrayList<>();
    private final List<Job> ran = new CopyOnWriteArrayList<>();
    private final Task<Job, Void> job = Task.builder("job", Job.class).build();
    private final TaskBinding<Job, Void> jobBinding = job.handledBy(j -> {
        ran.add(j);
        return null;
    });

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
    }

    private Binomic start(BinomicConfig.Builder config, Broker broker, TaskBinding<?, ?> binding) {
        WorkerConfig worker = WorkerConfig.builder().pollTimeout(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(2)).build();
        Binomic binomic = Binomic.builder().config(config.worker(worker).build()).handle(binding).broker(broker).build().start();
        opened.add(binomic);
        return binomic;
    }

    private static Message raw(String task, String json, Map<String, String> headers) {
        return Message.fromWire(UUID.randomUUID(), task, "default", 1, Instant.now(), json.getBytes(StandardCharsets.UTF_8), headers);
    }

    @Test
    void emptyObjectUnknownPropertyAndAnotherProducersRecordAreDeadLetteredNamingTheFieldAndNeverRun() throws Exception {
        Broker broker = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        Binomic binomic = start(BinomicConfig.builder(), broker, jobBinding);
        Worker worker = binomic.startWorker();

        broker.enqueue(raw("job", "{}", Map.of()));
        broker.enqueue(raw("job", "{\"queue\":\"q\",\"n\":1,\"priority\":\"high\"}", Map.of()));
        broker.enqueue(raw("job", "{\"customer\":\"c-7\",\"amount\":5}", Map.of()));
        broker.enqueue(raw("job", "{\"queue\":\"q\",\"n\":3.7}", Map.of()));
        binomic.submit(job, new Job("q", 2));

        WorkerTest.await("the good message ran", () -> worker.counters().succeeded() == 1);
        WorkerTest.await("four dead letters", () -> binomic.queueStats("default").deadLetters() == 4);
        assertEquals(List.of(new Job("q", 2)), ran, "only the well-formed message reaches the handler");
        List<DeadLetter> letters = binomic.deadLetters().list("default", DeadLetterFilter.all(), 10);
        assertTrue(letters.stream().allMatch(l -> l.failure().reason() == DeadLetterReason.DECODE_ERROR), letters.toString());
        List<String> messages = letters.stream().map(l -> l.failure().errorMessage()).sorted(Comparator.naturalOrder()).toList();
        assertEquals(4, messages.size(), messages.toString());
        assertTrue(messages.get(0).startsWith("$.customer: "), messages.toString());
        assertTrue(messages.get(1).startsWith("$.n: "), messages.toString());
        assertTrue(messages.get(2).startsWith("$.priority: "), messages.toString());
        assertTrue(messages.get(3).startsWith("$.queue: "), messages.toString());
    }

    @Test
    void theJdkCodecIsTheDefaultAndEachMessageRecordsItsCodec() throws Exception {
        List<String> codecs = new CopyOnWriteArrayList<>();
        Task<Reminder, Void> remind = Task.builder("remind", Reminder.class).build();
        TaskBinding<Reminder, Void> remindBinding = remind.handledBy(r -> {
            codecs.add(TaskContext.current().headers().get(Message.CODEC));
            return null;
        });
        Binomic binomic = start(BinomicConfig.builder(), new MemoryBrokerProvider().create(BrokerConfig.defaults()), remindBinding);
        Worker worker = binomic.startWorker();

        binomic.submit(remind, new Reminder("call", Optional.of(Instant.parse("2026-12-01T09:00:00Z"))));

        WorkerTest.await("the reminder ran", () -> worker.counters().succeeded() == 1);
        assertEquals(List.of("json-jdk"), codecs);
        assertEquals("json-jdk", BinomicConfig.defaults().payloadCodec());
    }

    @Test
    void anAbsentCodecIsAnErrorListingTheCodecsFound() {
        BinomicConfig config = BinomicConfig.builder().payloadCodec("gson").build();
        var e = assertThrows(ProviderNotFoundException.class, () -> Binomic.builder().config(config).build());
        assertEquals("""
                no payload codec with id 'gson' (BinomicConfig.payloadCodec): add the module that provides it, or choose one of the codecs found:
                  json-jdk: io.binomic.core.internal.codec.JdkJsonCodec in module io.binomic.core""", e.getMessage());
    }

    @Test
    void theCodecHeaderIsReservedAtSubmit() {
        Binomic binomic = start(BinomicConfig.builder(), new MemoryBrokerProvider().create(BrokerConfig.defaults()), jobBinding);
        var e = assertThrows(IllegalArgumentException.class,
                () -> binomic.submit(job, new Job("q", 1), Map.of(Message.CODEC, "jackson")));
        assertTrue(e.getMessage().contains("header 'codec' is reserved"), e.getMessage());
    }

    @Test
    void aMessageWrittenByACodecThisWorkerLacksIsADecodeErrorNamingBothCodecs() throws Exception {
        Broker broker = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        Binomic binomic = start(BinomicConfig.builder(), broker, jobBinding);
        Worker worker = binomic.startWorker();

        broker.enqueue(raw("job", "{\"queue\":\"q\",\"n\":1}", Map.of(Message.CODEC, "protobuf")));

        WorkerTest.await("one dead letter", () -> binomic.queueStats("default").deadLetters() == 1);
        DeadLetter letter = binomic.deadLetters().list("default", DeadLetterFilter.all(), 1).getFirst();
        assertEquals(DeadLetterReason.DECODE_ERROR, letter.failure().reason());
        assertEquals(PayloadDecodeException.class.getName(), letter.failure().errorClass());
        assertEquals("$: the message was written by payload codec 'protobuf', which this worker does not have"
                + " (codecs found: json-jdk); add the module that provides 'protobuf' to the worker", letter.failure().errorMessage());
        assertEquals(List.of(), ran);
        assertEquals(0, worker.counters().succeeded());
    }

    @Test
    void aMessageWrittenByAnotherCodecThisWorkerHasIsDecodedWithThatCodec() throws Exception {
        List<Integer> seen = new CopyOnWriteArrayList<>();
        Task<Integer, Void> count = Task.builder("count", Integer.class).build();
        Broker broker = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        // This instance writes with the test's text codec; the message below was written by json-jdk.
        WorkerConfig worker = WorkerConfig.builder().pollTimeout(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(2)).build();
        Binomic binomic = Binomic.builder().config(BinomicConfig.builder().worker(worker).build()).handle(count, n -> {
                    seen.add(n);
                    return null;
                })
                .codec(new TextCodec()).broker(broker).build().start();
        opened.add(binomic);
        Worker w = binomic.startWorker();

        broker.enqueue(raw("count", "42", Map.of(Message.CODEC, "json-jdk")));
        broker.enqueue(raw("count", "7", Map.of(Message.CODEC, "text")));
        broker.enqueue(raw("count", "!x", Map.of()));

        WorkerTest.await("two ran", () -> w.counters().succeeded() == 2);
        WorkerTest.await("the undecodable one is dead-lettered", () -> binomic.queueStats("default").deadLetters() == 1);
        assertEquals(List.of(7, 42), seen.stream().sorted().toList());
    }

    /** Found by the outside-in run: a payload {@code null} reached the handler as a null record. */
    @Test
    void aNullPayloadForATaskThatTakesAnArgumentIsADecodeErrorAndNeverRuns() throws Exception {
        Broker broker = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        Binomic binomic = start(BinomicConfig.builder(), broker, jobBinding);
        binomic.startWorker();

        broker.enqueue(raw("job", "null", Map.of()));

        WorkerTest.await("one dead letter", () -> binomic.queueStats("default").deadLetters() == 1);
        DeadLetter letter = binomic.deadLetters().list("default", DeadLetterFilter.all(), 10).getFirst();
        assertEquals(DeadLetterReason.DECODE_ERROR, letter.failure().reason());
        assertTrue(letter.failure().errorMessage().startsWith("$: null, but the task takes a "), letter.failure().errorMessage());
        assertEquals(List.of(), ran, "the handler never ran");
    }
}
