package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.PayloadDecodeException;
import io.binomic.api.spi.PayloadCodec;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What every {@link PayloadCodec} must do, so that switching codecs changes nothing: the same
 * records give the same JSON text and decode to equal values through every codec, and decoding is
 * strict. A payload with an unknown property, a missing component, {@code null} for a primitive
 * or a fraction for an integer is a {@link PayloadDecodeException} whose message starts with the
 * path of the offending field ({@code $.lines[0].quantity: ...}), never a handler run with nulls
 * and zeros. Each codec extends this class; the expected JSON below is shared, so two codecs that
 * pass it agree with each other byte for byte.
 */
public abstract class PayloadCodecContractTest {

    protected PayloadCodecContractTest() {
    }

    /** The codec under test. */
    protected abstract PayloadCodec codec();

    public enum Status { NEW, PAID }

    public record Line(String sku, int quantity, BigDecimal price) { }

    public record Order(String id, Status status, Instant placedAt, List<Line> lines, Optional<String> note,
            Optional<Line> gift, BigDecimal total, long version, boolean rush, double weight) { }

    public record Job(String queue, int n) { }

    public record Inner(int x) { }

    public record Outer(String name, Inner inner) { }

    public record Note(Optional<String> text) { }

    public record Stamp(Instant at, Status status) { }

    private static final Order ORDER = new Order("o-1", Status.PAID, Instant.parse("2026-11-30T04:00:00.123Z"),
            List.of(new Line("a", 2, new BigDecimal("9.90")), new Line("b", 1, new BigDecimal("0.00"))),
            Optional.of("ring twice"), Optional.empty(), new BigDecimal("19.80"), 7L, true, 1.5);

    private static final String ORDER_JSON = "{\"id\":\"o-1\",\"status\":\"PAID\",\"placedAt\":\"2026-11-30T04:00:00.123Z\","
            + "\"lines\":[{\"sku\":\"a\",\"quantity\":2,\"price\":9.90},{\"sku\":\"b\",\"quantity\":1,\"price\":0.00}],"
            + "\"note\":\"ring twice\",\"gift\":null,\"total\":19.80,\"version\":7,\"rush\":true,\"weight\":1.5}";

    private String encode(Object value) {
        return new String(codec().encode(value), StandardCharsets.UTF_8);
    }

    private <T> T decode(String json, Class<T> type) {
        return codec().decode(json.getBytes(StandardCharsets.UTF_8), type);
    }

    @Test
    void recordsWithOptionalInstantListNestedRecordsEnumsAndBigDecimalEncodeToTheSharedJson() {
        assertEquals(ORDER_JSON, encode(ORDER));
        assertEquals("{\"name\":\"n\",\"inner\":{\"x\":3}}", encode(new Outer("n", new Inner(3))));
        assertEquals("{\"text\":null}", encode(new Note(Optional.empty())));
        assertEquals("null", encode(null));
    }

    @Test
    void theSharedJsonDecodesToEqualRecords() {
        assertEquals(ORDER, decode(ORDER_JSON, Order.class));
        assertEquals(ORDER, decode(encode(ORDER), Order.class));
        Order withGift = new Order("o-2", Status.NEW, Instant.parse("2026-01-01T00:00:00Z"), List.of(), Optional.empty(),
                Optional.of(new Line("g", 1, BigDecimal.ONE)), new BigDecimal("1E+3"), -1L, false, -0.25);
        assertEquals(withGift, decode(encode(withGift), Order.class));
        assertEquals(new Note(Optional.empty()), decode("{\"text\":null}", Note.class));
        assertEquals(new Note(Optional.of("t")), decode("{\"text\":\"t\"}", Note.class));
        assertEquals(new Outer("n", null), decode("{\"name\":\"n\",\"inner\":null}", Outer.class));
        assertEquals(new BigDecimal("9.90"), decode(ORDER_JSON, Order.class).lines().getFirst().price(),
                "a BigDecimal keeps its scale");
    }

    @Test
    void aPayloadWithoutArgumentIsNull() {
        assertEquals(null, decode("null", Job.class));
    }

    @ParameterizedTest(name = "[{index}] {0} as {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
        # payload                                                  | type  | the message starts with
        {"queue":"q","n":1,"extra":2}                              | Job   | $.extra
        {}                                                         | Job   | $.queue
        {"queue":"q"}                                              | Job   | $.n
        {"n":1}                                                    | Job   | $.queue
        {"queue":"q","n":null}                                     | Job   | $.n
        {"queue":"q","n":3.7}                                      | Job   | $.n
        {"queue":"q","n":"3"}                                      | Job   | $.n
        {"queue":5,"n":1}                                          | Job   | $.queue
        {"queue":"q","n":3000000000}                               | Job   | $.n
        {"name":"a","inner":{}}                                    | Outer | $.inner.x
        {"name":"a","inner":{"x":1,"y":2}}                         | Outer | $.inner.y
        {"name":"a","inner":{"x":1.5}}                             | Outer | $.inner.x
        {}                                                         | Note  | $.text
        {"text":5}                                                 | Note  | $.text
        {"at":"yesterday","status":"NEW"}                          | Stamp | $.at
        {"at":"2026-01-01T00:00:00Z","status":"LOST"}              | Stamp | $.status
        {"at":"2026-01-01T00:00:00Z","status":0}                   | Stamp | $.status
        {"at":"2026-01-01T00:00:00Z"}                              | Stamp | $.status
        """)
    void strictDecodingFailsNamingTheField(String payload, String type, String path) {
        Class<?> target = switch (type) {
            case "Job" -> Job.class;
            case "Outer" -> Outer.class;
            case "Note" -> Note.class;
            case "Stamp" -> Stamp.class;
            default -> throw new IllegalArgumentException(type);
        };
        PayloadDecodeException e = assertThrows(PayloadDecodeException.class, () -> decode(payload, target),
                () -> payload + " must not decode as " + type);
        assertTrue(e.getMessage().startsWith(path + ": "), "the message names " + path + ": " + e.getMessage());
    }

    @Test
    void aFractionInAListElementNamesItsIndex() {
        String json = ORDER_JSON.replace("\"quantity\":1,", "\"quantity\":1.5,");
        PayloadDecodeException e = assertThrows(PayloadDecodeException.class, () -> decode(json, Order.class));
        assertTrue(e.getMessage().startsWith("$.lines[1].quantity: "), e.getMessage());
    }

    @Test
    void trailingGarbageAndDuplicatePropertiesAreRefused() {
        assertThrows(PayloadDecodeException.class, () -> decode("{\"queue\":\"q\",\"n\":1} x", Job.class));
        assertThrows(PayloadDecodeException.class, () -> decode("{\"queue\":\"q\",\"n\":1,\"n\":2}", Job.class));
    }
}
