package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;
import static org.quicktheories.generators.SourceDSL.maps;
import static org.quicktheories.generators.SourceDSL.strings;

import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * The stream-entry encoding loses nothing, and decoding never throws, whatever is stored.
 * QuickTheories generates the cases and shrinks a failing one; a failure prints the seed to
 * replay it with {@code -DQT_SEED=...}.
 */
class StreamFieldsProperties {
    /** jqwik ran each property 1000 times (its default); QuickTheories skips a repeated draw, so ask for some more. */
    private static final int MIN_CASES = 1000;
    private static final int EXAMPLES = 1200;
    /** About one map in nine is empty, a repeat that QuickTheories skips. */
    private static final int FIELDS_EXAMPLES = 1500;

    /** The scalar fields of a generated message. */
    record Envelope(String task, String queue, int attempt, long enqueuedMs) { }

    @Test
    void everyMessageSurvivesTheRoundTripThroughStreamFields() {
        Gen<Envelope> envelopes = text(1, 255).zip(text(1, 255), integers().between(1, 10_000),
                longs().between(0, 4_102_444_800_000L), Envelope::new);
        Gen<byte[]> payloads = Generate.byteArrays(integers().between(0, 200), Generate.bytes(Byte.MIN_VALUE, Byte.MAX_VALUE, (byte) 0));
        Gen<Map<String, String>> headers = maps().of(text(0, 255), text(0, 255)).ofSizeBetween(0, 5);
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(EXAMPLES).forAll(envelopes, payloads, headers).checkAssert((envelope, payload, header) -> {
            cases.incrementAndGet();
            Message message = Message.fromWire(UUID.randomUUID(), envelope.task(), envelope.queue(), envelope.attempt(),
                    Instant.ofEpochMilli(envelope.enqueuedMs()), payload, header);

            assertEquals(message, StreamFields.decode(StreamFields.encode(message)));
            assertEquals(asText(StreamFields.utf8(StreamFields.encode(message))), asText(StreamFields.encodeBytes(message)),
                    "an XADD sends the same fields, in the same order, as the string form's UTF-8");
            Message codecOnly = Message.fromWire(message.id(), message.task(), message.queue(), message.attempt(), message.enqueuedAt(),
                    payload, StreamFields.DEFAULT_CODEC_ONLY);
            assertEquals(asText(StreamFields.utf8(StreamFields.encode(codecOnly))), asText(StreamFields.encodeBytes(codecOnly)));
            Message noHeaders = Message.fromWire(message.id(), message.task(), message.queue(), message.attempt(), message.enqueuedAt(),
                    payload, Map.of());
            assertEquals(asText(StreamFields.utf8(StreamFields.encode(noHeaders))), asText(StreamFields.encodeBytes(noHeaders)));
            assertEquals(message, StreamFields.decode(StreamFields.fromJson(StreamFields.toJson(StreamFields.encode(message)))),
                    "the delayed-set member (one JSON object) decodes back too");
        });
        assertAtLeast(MIN_CASES, cases);
    }

    @Test
    void anyStoredFieldsBecomeADeliveryNeverAnException() {
        // Keys are often the real field names, so that decoding gets past the first missing field.
        Gen<String> keys = Generate.oneOf(Generate.pick(List.of(StreamFields.ID, StreamFields.TASK, StreamFields.QUEUE,
                StreamFields.ATTEMPT, StreamFields.ENQUEUED_AT, StreamFields.PAYLOAD, StreamFields.PAYLOAD_BASE64,
                StreamFields.HEADERS)), text(0, 255));
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(FIELDS_EXAMPLES).forAll(maps().of(keys, text(0, 255)).ofSizeBetween(0, 8)).checkAssert(fields -> {
            cases.incrementAndGet();
            Delivery delivery = StreamFields.toDelivery("q", "1-0", fields, 1);

            assertTrue(delivery.message().isPresent() || delivery.decodeProblem().orElseThrow().contains("1-0"));
            if (delivery.message().isEmpty()) {
                assertEquals(fields, delivery.rawFields(), "a broken entry keeps every raw field");
            }
        });
        assertAtLeast(MIN_CASES, cases);
    }

    @Test
    void fieldsReadAsBytesDecodeAsTheyDidReadAsStrings() {
        Gen<String> keys = Generate.oneOf(Generate.pick(List.of(StreamFields.ID, StreamFields.TASK, StreamFields.QUEUE,
                StreamFields.ATTEMPT, StreamFields.ENQUEUED_AT, StreamFields.PAYLOAD, StreamFields.PAYLOAD_BASE64,
                StreamFields.HEADERS, StreamFields.PRIORITY)), text(0, 20));
        // Values that nearly pass as well as any text, so that decoding gets to every field's parser.
        Gen<String> values = Generate.oneOf(Generate.pick(List.of("1", "007", "+1", "-1", "0", "2147483648", "q", "t",
                "1700000000000", "99999999999999999999", UUID.randomUUID().toString(), UUID.randomUUID().toString().toUpperCase(),
                "1-2-3-4-5", "{}", "{\"codec\":\"jackson\"}", "AAEC", "5", "")), text(0, 40));
        AtomicInteger cases = new AtomicInteger();
        qt().withExamples(FIELDS_EXAMPLES).forAll(maps().of(keys, values).ofSizeBetween(0, 9)).checkAssert(fields -> {
            cases.incrementAndGet();
            Map<String, byte[]> stored = new java.util.LinkedHashMap<>();
            fields.forEach((name, value) -> stored.put(name, value.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
            // What a read with StringCodec returned for the same stored bytes:
            Delivery fromStrings = StreamFields.toDelivery("q", "1-0", StreamFields.strings(stored), 1);
            Delivery fromBytes = StreamFields.toDeliveryFromBytes("q", "1-0", stored, 1);

            assertEquals(fromStrings.message(), fromBytes.message());
            assertEquals(fromStrings.decodeProblem(), fromBytes.decodeProblem());
            assertEquals(fromStrings.rawFields(), fromBytes.rawFields());
        });
        assertAtLeast(MIN_CASES, cases);
    }

    /** Any UTF-16 text (control characters, unpaired surrogates) or text of any code points (supplementary pairs). */
    private static Gen<String> text(int minLength, int maxLength) {
        return Generate.oneOf(
                strings().betweenCodePoints(Character.MIN_VALUE, Character.MAX_VALUE).ofLengthBetween(minLength, maxLength),
                strings().betweenCodePoints(Character.MIN_CODE_POINT, Character.MAX_CODE_POINT).ofLengthBetween(minLength, maxLength));
    }

    /** Byte fields as comparable text: each name and value as its bytes' list, in order. */
    private static List<String> asText(Map<byte[], byte[]> fields) {
        List<String> out = new java.util.ArrayList<>();
        fields.forEach((k, v) -> out.add(java.util.Arrays.toString(k) + "=" + java.util.Arrays.toString(v)));
        return out;
    }

    private static void assertAtLeast(int expected, AtomicInteger cases) {
        assertTrue(cases.get() >= expected, () -> "only " + cases.get() + " distinct cases ran, expected " + expected);
    }
}
