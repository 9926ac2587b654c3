package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Fetched entries are decoded from bytes ({@link EntryCodec}); every entry, well-formed or broken,
 * must decode to what the string decoder made of it, with the same error message.
 */
class StreamFieldsBytesTest {
    private static final String UUID_TEXT = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0";

    private static Map<String, String> valid() {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put(StreamFields.ID, UUID_TEXT);
        fields.put(StreamFields.TASK, "send-mail");
        fields.put(StreamFields.QUEUE, "q");
        fields.put(StreamFields.ATTEMPT, "3");
        fields.put(StreamFields.ENQUEUED_AT, "1700000000123");
        fields.put(StreamFields.PAYLOAD, "{\"to\":\"zoë@例え.jp\"}");
        return fields;
    }

    private static Map<String, String> with(String name, String value) {
        Map<String, String> fields = valid();
        if (value == null) {
            fields.remove(name);
        } else {
            fields.put(name, value);
        }
        return fields;
    }

    private static Map<String, byte[]> bytes(Map<String, String> fields) {
        Map<String, byte[]> bytes = new LinkedHashMap<>();
        fields.forEach((name, value) -> bytes.put(name, value.getBytes(StandardCharsets.UTF_8)));
        return bytes;
    }

    private static String outcome(java.util.function.Supplier<Message> decode) {
        try {
            Message m = decode.get();
            return "ok " + m.id() + " " + m.task() + " " + m.queue() + " " + m.attempt() + " " + m.enqueuedAt().toEpochMilli()
                    + " " + java.util.Arrays.toString(m.payload()) + " " + new java.util.TreeMap<>(m.wireHeaders());
        } catch (RuntimeException e) {
            return e.getClass().getSimpleName() + ": " + e.getMessage();
        }
    }

    @Test
    void everyEntryDecodesFromBytesAsItDoesFromStringsWithTheSameErrors() {
        List<Map<String, String>> cases = new ArrayList<>();
        cases.add(valid());
        for (String id : new String[] {UUID_TEXT.toUpperCase(), "1-2-3-4-5", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg",
                "0f1e2d3c+4b5a-6978-8796-a5b4c3d2e1f0", "not-a-uuid", "", null, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 "}) {
            cases.add(with(StreamFields.ID, id));
        }
        for (String attempt : new String[] {"1", "007", "+2", "-1", "0", "zero", "2147483647", "2147483648", "999999999",
                "9999999999", "", null, " 1", "١"}) {
            cases.add(with(StreamFields.ATTEMPT, attempt));
        }
        for (String at : new String[] {"0", "-5", "+5", "123456789012345678", "1234567890123456789", "9223372036854775807",
                "9223372036854775808", "1.5", "", null}) {
            cases.add(with(StreamFields.ENQUEUED_AT, at));
        }
        for (String task : new String[] {"", null, "ünïcödé", " "}) {
            cases.add(with(StreamFields.TASK, task));
        }
        for (String queue : new String[] {"", null, "other", "q2", "ü"}) {
            cases.add(with(StreamFields.QUEUE, queue));
        }
        cases.add(with(StreamFields.PAYLOAD, ""));
        Map<String, String> base64 = with(StreamFields.PAYLOAD, null);
        base64.put(StreamFields.PAYLOAD_BASE64, "//4AeA==");
        cases.add(base64);
        for (String b64 : new String[] {"", "!!", "ü==", "AA"}) {
            Map<String, String> bad = with(StreamFields.PAYLOAD, null);
            bad.put(StreamFields.PAYLOAD_BASE64, b64);
            cases.add(bad);
        }
        cases.add(with(StreamFields.PAYLOAD, null));
        for (String headers : new String[] {"{}", "{\"codec\":\"jackson\"}", "{\"codec\":\"a\",\"x\":\"y\"}", "[1]", "", "{\"codec\":\"ü\"}"}) {
            cases.add(with(StreamFields.HEADERS, headers));
        }
        for (String priority : new String[] {"5", "0", "x", ""}) {
            cases.add(with(StreamFields.PRIORITY, priority));
        }
        cases.add(with("unknown", "kept"));

        for (Map<String, String> fields : cases) {
            String fromStrings = outcome(() -> StreamFields.decode(fields));
            String fromBytes = outcome(() -> StreamFields.decodeBytes(bytes(fields), "q"));
            assertEquals(fromStrings, fromBytes, fields.toString());
        }
        assertTrue(outcome(() -> StreamFields.decodeBytes(bytes(valid()), "q")).startsWith("ok " + UUID_TEXT + " send-mail q 3 1700000000123"));
    }

    /** A priority that is not one: the entry is refused (dead-lettered with it), not run at the default priority. */
    @Test
    void aPriorityFieldThatIsNotADigitFailsTheEntryOnBothDecoders() {
        for (String bad : new String[] {"x", "", "42", "-1", "７"}) {
            String expected = "field 'priority' has a bad value '" + bad + "': a priority is one digit, from 0 (lowest) to 9 (highest)";
            assertEquals("IllegalArgumentException: " + expected, outcome(() -> StreamFields.decode(with(StreamFields.PRIORITY, bad))), bad);
            assertEquals("IllegalArgumentException: " + expected, outcome(() -> StreamFields.decodeBytes(bytes(with(StreamFields.PRIORITY, bad)), "q")), bad);
        }
        assertEquals(7, StreamFields.decodeBytes(bytes(with(StreamFields.PRIORITY, "7")), "q").priority());
    }

    /** The XADD's bytes of the common messages (built without the string map) are those of the string form. */
    @Test
    void encodedBytesAreTheStringFormsUtf8ForCommonMessages() {
        for (int i = 0; i < 200; i++) {
            UUID id = i == 0 ? new UUID(0, 0) : i == 1 ? new UUID(-1, -1) : UUID.randomUUID();
            for (String payload : new String[] {"", "0", "{\"to\":\"Zoë\",\"city\":\"東京\",\"mood\":\"🚀\"}"}) {
                for (Map<String, String> headers : List.of(Map.<String, String>of(), StreamFields.DEFAULT_CODEC_ONLY,
                        Map.of(io.binomic.api.spi.Message.CODEC, "jackson"))) {
                    io.binomic.api.spi.Message m = io.binomic.api.spi.Message.fromWire(id, "tâsk", "q", 1 + i, java.time.Instant.ofEpochMilli(1_700_000_000_000L + i),
                            payload.getBytes(StandardCharsets.UTF_8), headers);
                    List<String> expected = new ArrayList<>();
                    StreamFields.utf8(StreamFields.encode(m)).forEach((k, v) -> expected.add(new String(k, StandardCharsets.UTF_8) + "=" + java.util.Arrays.toString(v)));
                    List<String> actual = new ArrayList<>();
                    StreamFields.encodeBytes(m).forEach((k, v) -> actual.add(new String(k, StandardCharsets.UTF_8) + "=" + java.util.Arrays.toString(v)));
                    assertEquals(expected, actual, m.toString());
                }
            }
        }
    }

    @Test
    void thePayloadIsTheBytesRedisHeldAndPayload64IsDecoded() {
        Map<String, byte[]> fields = bytes(valid());
        byte[] notUtf8 = {(byte) 0xff, (byte) 0xfe, 0, 'x'};
        fields.put(StreamFields.PAYLOAD, notUtf8);
        assertArrayEquals(notUtf8, StreamFields.decodeBytes(fields, "q").payload(), "used as it is, not decoded and encoded again");

        fields.remove(StreamFields.PAYLOAD);
        fields.put(StreamFields.PAYLOAD_BASE64, "//4AeA==".getBytes(StandardCharsets.US_ASCII));
        assertArrayEquals(notUtf8, StreamFields.decodeBytes(fields, "q").payload());
        assertEquals(UUID.fromString(UUID_TEXT), StreamFields.decodeBytes(fields, "q").id());
    }

    @Test
    void aBrokenEntryBecomesAMalformedDeliveryWithReadableRawFieldsEvenWhenTheyAreNotUtf8() {
        Map<String, byte[]> fields = bytes(with(StreamFields.ATTEMPT, "x1"));
        fields.put(StreamFields.TASK, new byte[] {(byte) 0xc3, '(', 'x'});
        fields.put("other", new byte[] {(byte) 0xff});

        Delivery delivery = StreamFields.toDeliveryFromBytes("q", "1-0", fields, 2);

        assertTrue(delivery.message().isEmpty());
        assertEquals("stream entry 1-0 of queue 'q' is not a Binomic message: field 'attempt' has a bad value 'x1': "
                + "For input string: \"x1\"", delivery.decodeProblem().orElseThrow());
        assertEquals("\uFFFD(x", delivery.rawFields().get(StreamFields.TASK));
        assertEquals("\uFFFD", delivery.rawFields().get("other"));
        assertEquals("x1", delivery.rawFields().get(StreamFields.ATTEMPT));
        assertEquals(2, delivery.deliveryCount());
        Map<String, String> asStrings = with(StreamFields.ATTEMPT, "x1");
        assertEquals(StreamFields.toDelivery("q", "1-0", asStrings, 2).decodeProblem(),
                StreamFields.toDeliveryFromBytes("q", "1-0", bytes(asStrings), 2).decodeProblem());
    }

    @Test
    void knownFieldNamesAreTheConstantsAndOthersAreDecoded() {
        assertTrue(EntryCodec.fieldName("payload".getBytes(StandardCharsets.US_ASCII)) == StreamFields.PAYLOAD);
        assertEquals("héllo", EntryCodec.fieldName("héllo".getBytes(StandardCharsets.UTF_8)));
    }
}
