package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.binomic.api.spi.Message;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The codec header, which nearly every message carries, is stored as plain JSON and read back. */
class StreamFieldsTest {
    private static Message withHeaders(Map<String, String> headers) {
        return Message.fromWire(UUID.randomUUID(), "t", "q", 1, Instant.ofEpochMilli(1_000),
                "{}".getBytes(StandardCharsets.UTF_8), headers);
    }

    @Test
    void theCodecHeaderIsAJsonObjectRedisCliCanRead() {
        Message message = withHeaders(Map.of(Message.CODEC, "jackson"));
        Map<String, String> fields = StreamFields.encode(message);
        assertEquals("{\"codec\":\"jackson\"}", fields.get(StreamFields.HEADERS));
        assertEquals(StreamFields.toJson(Map.of(Message.CODEC, "jackson")), fields.get(StreamFields.HEADERS),
                "the same text Jackson writes");
        assertEquals(message, StreamFields.decode(fields));
    }

    @Test
    void theDefaultCodecAloneIsWrittenAsNoHeadersFieldAndReadBackFromItsAbsence() {
        Message defaultCodec = withHeaders(Map.of(Message.CODEC, "json-jdk"));
        Map<String, String> fields = StreamFields.encode(defaultCodec);
        assertFalse(fields.containsKey(StreamFields.HEADERS), fields.toString());
        assertEquals(defaultCodec, StreamFields.decode(fields));

        Message none = withHeaders(Map.of());
        assertEquals("{}", StreamFields.encode(none).get(StreamFields.HEADERS), "no header at all is still told apart");
        assertEquals(none, StreamFields.decode(StreamFields.encode(none)));
    }

    @Test
    void otherHeadersBesideTheCodecAndOddCodecIdsRoundTrip() {
        for (Map<String, String> headers : java.util.List.of(Map.of(Message.CODEC, "a\"b"), Map.of(Message.CODEC, "jackson", "x", "y"),
                Map.of("codec2", "z"), Map.of(Message.CODEC, ""))) {
            Message message = withHeaders(headers);
            assertEquals(message, StreamFields.decode(StreamFields.encode(message)), headers.toString());
        }
    }
}
