package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Message;
import io.binomic.api.spi.Delivery;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.NotEmpty;
import net.jqwik.api.constraints.Size;

/** The stream-entry encoding loses nothing, and decoding never throws, whatever is stored. */
class StreamFieldsProperties {

    @Property
    void everyMessageSurvivesTheRoundTripThroughStreamFields(@ForAll @NotEmpty String task, @ForAll @NotEmpty String queue,
            @ForAll @IntRange(min = 1, max = 10_000) int attempt, @ForAll @LongRange(min = 0, max = 4_102_444_800_000L) long enqueuedMs,
            @ForAll @Size(max = 200) byte[] payload, @ForAll @Size(max = 5) Map<String, String> headers) {
        Message message = new Message(UUID.randomUUID(), task, queue, attempt, Instant.ofEpochMilli(enqueuedMs), payload, headers);

        assertEquals(message, StreamFields.decode(StreamFields.encode(message)));
        assertEquals(message, StreamFields.decode(StreamFields.fromJson(StreamFields.toJson(StreamFields.encode(message)))),
                "the delayed-set member (one JSON object) decodes back too");
    }

    @Property
    void anyStoredFieldsBecomeADeliveryNeverAnException(@ForAll @Size(max = 8) Map<String, String> fields) {
        Delivery delivery = StreamFields.toDelivery("q", "1-0", fields, 1);

        assertTrue(delivery.message().isPresent() || delivery.decodeProblem().orElseThrow().contains("1-0"));
        if (delivery.message().isEmpty()) {
            assertEquals(fields, delivery.rawFields(), "a broken entry keeps every raw field");
        }
    }
}
