package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.PayloadDecodeException;
import io.binomic.api.spi.PayloadCodec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/** The Jackson codec as applications get it: found by ServiceLoader, preferred over the JDK-only one. */
class JacksonPayloadCodecIT {
    private final PayloadCodec codec = ServiceLoader.load(PayloadCodec.class).stream().map(ServiceLoader.Provider::get)
            .filter(c -> c.id().equals("jackson")).findFirst().orElseThrow();

    record Order(String id, int quantity, Instant placedAt, LocalDate due, Duration window, List<String> tags) { }

    record Small(String id) { }

    private static byte[] json(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void jacksonOutranksTheJdkCodec() {
        int best = ServiceLoader.load(PayloadCodec.class).stream().map(ServiceLoader.Provider::get)
                .mapToInt(PayloadCodec::priority).max().orElseThrow();
        assertEquals(best, codec.priority());
    }

    @Test
    void recordsWithJavaTimeValuesRoundTrip() {
        Order order = new Order("o-1", 3, Instant.parse("2026-11-30T04:00:00.123Z"), LocalDate.of(2026, 12, 24),
                Duration.ofMinutes(90), List.of("a", "b"));

        byte[] bytes = codec.encode(order);

        assertTrue(new String(bytes, StandardCharsets.UTF_8).contains("\"placedAt\":\"2026-11-30T04:00:00.123Z\""),
                "java.time is written as ISO text: " + new String(bytes, StandardCharsets.UTF_8));
        assertEquals(order, codec.decode(bytes, Order.class));
    }

    @Test
    void unknownPropertiesFromANewerProducerAreIgnored() {
        assertEquals(new Small("x"), codec.decode(json("{\"id\":\"x\",\"addedLater\":42}"), Small.class));
    }

    @Test
    void aClassNameInThePayloadNeverChoosesWhatIsInstantiated() {
        Object decoded = codec.decode(json("{\"@class\":\"java.net.URL\",\"protocol\":\"http\",\"host\":\"evil\"}"), Object.class);
        assertInstanceOf(Map.class, decoded, "decoded into plain JSON data, not a java.net.URL");
        assertEquals(new Small("x"), codec.decode(json("{\"@class\":\"java.lang.ProcessBuilder\",\"id\":\"x\"}"), Small.class));
    }

    @Test
    void nullEncodesForTasksWithoutArgument() {
        assertEquals("null", new String(codec.encode(null), StandardCharsets.UTF_8));
    }

    @Test
    void undecodablePayloadIsAPayloadDecodeExceptionNamingTheType() {
        PayloadDecodeException e = assertThrows(PayloadDecodeException.class,
                () -> codec.decode(json("{\"id\": [1, 2"), Small.class));
        assertTrue(e.getMessage().startsWith("cannot decode the payload into " + Small.class.getName()), e.getMessage());

        PayloadDecodeException wrongType = assertThrows(PayloadDecodeException.class,
                () -> codec.decode(json("{\"id\":\"o\",\"quantity\":\"many\"}"), Order.class));
        assertTrue(wrongType.getMessage().contains("quantity") || wrongType.getMessage().contains("many"), wrongType.getMessage());
    }
}
