package io.binomic.core.internal.codec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.PayloadDecodeException;
import java.lang.constant.PackageDesc;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class JdkJsonCodecTest {
    private final JdkJsonCodec codec = new JdkJsonCodec();

    enum Status { NEW, PAID }

    record Order(String id, int quantity, BigDecimal price, List<String> tags, Optional<String> note, Status status) { }

    record Scalars(String text, boolean flag, Boolean boxedFlag, byte b, short s, int i, long l, float f, double d,
            Byte boxedB, Short boxedS, Integer boxedI, Long boxedL, Float boxedF, Double boxedD, char c,
            Character boxedC, BigDecimal decimal, BigInteger integer, Status status, UUID uuid) { }

    record Times(Instant instant, Duration duration, LocalDate date, LocalDateTime dateTime, LocalTime time,
            ZonedDateTime zoned, OffsetDateTime offset) { }

    record Line(String name, BigDecimal price) { }

    record Cart(List<Line> items) { }

    record Page<T>(List<T> items, Optional<T> first) { }

    record Containers(Set<Integer> numbers, Collection<String> names, Map<String, List<Line>> linesByKey,
            Optional<Line> present, Optional<Line> absent, Page<Line> page, ArrayList<Double> concrete) { }

    record Arrays(int[] ints, String[] strings, Line[] lines, List<String>[] genericArray) { }

    record Defaults(String text, int number, boolean flag, double ratio, Optional<String> maybe, List<String> list,
            Character c) { }

    record Plain(String name) { }

    record Empty() { }

    record Positive(int value) {
        Positive {
            if (value <= 0) {
                throw new IllegalArgumentException("value must be positive, was " + value);
            }
        }
    }

    record Holder(Object value) { }

    private <T> T roundTrip(T value, Class<T> type) {
        return codec.decode(codec.encode(value), type);
    }

    private <T> T decode(String json, Class<T> type) {
        return codec.decode(json.getBytes(StandardCharsets.UTF_8), type);
    }

    private String encode(Object value) {
        return new String(codec.encode(value), StandardCharsets.UTF_8);
    }

    private String decodeError(String json, Class<?> type) {
        return assertThrows(PayloadDecodeException.class, () -> decode(json, type)).getMessage();
    }

    @Test
    void identifiesItselfAsJsonJdk() {
        assertEquals("json-jdk", codec.id());
    }

    @Nested
    class Encoding {
        @Test
        void smallRecordIsCompactJsonInComponentOrder() {
            Order order = new Order("o-1", 3, new BigDecimal("9.90"), List.of("a", "b"), Optional.empty(), Status.PAID);
            assertEquals("{\"id\":\"o-1\",\"quantity\":3,\"price\":9.90,\"tags\":[\"a\",\"b\"],\"note\":null,\"status\":\"PAID\"}",
                    encode(order));
        }

        /** Each object and array puts its own commas: an empty one inside, or one just closed, changes nothing around it. */
        @Test
        void nestedObjectsAndArraysSeparateTheirOwnMembers() {
            Map<String, Object> inner = new LinkedHashMap<>();
            inner.put("empty", Map.of());
            inner.put("none", List.of());
            inner.put("plain", new Plain("p"));
            inner.put("lines", List.of(new Line("a", BigDecimal.ONE), new Line("b", null)));
            Map<String, Object> outer = new LinkedHashMap<>();
            outer.put("first", inner);
            outer.put("after", new Object[] {Map.of(), List.of(Map.of("k", List.of())), new Empty()});
            outer.put("last", new Holder(new Holder(Map.of())));
            assertEquals("{\"first\":{\"empty\":{},\"none\":[],\"plain\":{\"name\":\"p\"},\"lines\":[{\"name\":\"a\",\"price\":1},"
                    + "{\"name\":\"b\",\"price\":null}]},\"after\":[{},[{\"k\":[]}],{}],\"last\":{\"value\":{\"value\":{}}}}",
                    encode(outer));
        }

        @Test
        void nullIsTheJsonNullLiteral() {
            assertEquals("null", encode(null));
            assertNull(decode("null", Plain.class));
        }

        @Test
        void stringsEscapeQuotesBackslashesControlCharactersAndLoneSurrogates() {
            String text = "q\"b\\n\n\r\t\b\f\u0001\u001f é😀 \uD800 \uDC00 /";
            assertEquals("\"q\\\"b\\\\n\\n\\r\\t\\b\\f\\u0001\\u001f é😀 \\ud800 \\udc00 /\"", encode(text));
            assertEquals(text, roundTrip(text, String.class));
        }

        @Test
        void outputIsUtf8() {
            assertArrayEquals(new byte[] {'"', (byte) 0xC3, (byte) 0xA9, (byte) 0xF0, (byte) 0x9F, (byte) 0x98,
                (byte) 0x80, '"'}, codec.encode("é😀"));
        }

        @Test
        void timesAreIsoStrings() {
            assertEquals("[\"2026-01-02T03:04:05Z\",\"PT1H30M\",\"2026-01-02\"]",
                    encode(List.of(Instant.parse("2026-01-02T03:04:05Z"), Duration.ofMinutes(90), LocalDate.of(2026, 1, 2))));
        }

        @Test
        void nonFiniteFloatingPointBecomesAString() {
            assertEquals("[\"NaN\",\"-Infinity\",-0.0,1.0E300]",
                    encode(List.of(Double.NaN, Double.NEGATIVE_INFINITY, -0.0, 1e300)));
        }

        @Test
        void unsupportedTypeNamesTheTypeAndSuggestsARecord() {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> codec.encode(new Holder(new StringBuilder("x"))));
            assertEquals("cannot encode $.value: type java.lang.StringBuilder is not supported (supported: records,"
                    + " String, boolean, numbers, BigDecimal, BigInteger, char, enums, UUID, java.time values,"
                    + " Optional, collections, maps with String keys and arrays); use a record", e.getMessage());
        }

        @Test
        void mapWithNonStringKeysIsRejected() {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> codec.encode(Map.of(1, "one")));
            assertEquals("cannot encode $: map key 1 is not a String; JSON object keys are strings,"
                    + " so use Map<String, ...> or a list of records", e.getMessage());
        }

        @Test
        void selfContainingCollectionFailsClearlyInsteadOfOverflowingTheStack() {
            List<Object> loop = new ArrayList<>();
            loop.add(loop);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> codec.encode(loop));
            assertTrue(e.getMessage().endsWith(": nesting is deeper than 256 levels (is a collection containing itself?)"),
                    e.getMessage());
        }

        @Test
        void recordInAPackageNotOpenToTheCodecSaysHowToOpenIt() {
            Object internalRecord = PackageDesc.of("a.b"); // jdk.internal.constant.PackageDescImpl, a record
            assertTrue(internalRecord.getClass().isRecord());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> codec.encode(internalRecord));
            assertEquals("cannot encode $: cannot access record jdk.internal.constant.PackageDescImpl in module java.base:"
                    + " open package jdk.internal.constant to io.binomic.core"
                    + " (add `opens jdk.internal.constant to io.binomic.core;` to module-info.java)", e.getMessage());
        }
    }

    @Nested
    class RoundTrips {
        @Test
        void everyScalarType() {
            Scalars scalars = new Scalars("text ✓", true, false, Byte.MIN_VALUE, Short.MAX_VALUE, Integer.MIN_VALUE,
                    Long.MIN_VALUE, Float.MAX_VALUE, Double.MIN_VALUE, (byte) 7, (short) -7, 42, Long.MAX_VALUE, 1.5f, -0.0,
                    '"', 'é', new BigDecimal("-1234567890.0987654321e-50"),
                    new BigInteger("123456789012345678901234567890"), Status.NEW,
                    UUID.fromString("0190c3f2-7b5e-7a2c-9d1e-3f4a5b6c7d8e"));
            assertEquals(scalars, roundTrip(scalars, Scalars.class));
        }

        @Test
        void everyTimeType() {
            Times times = new Times(Instant.parse("2026-11-30T04:20:00.123456789Z"), Duration.ofSeconds(-3, 5),
                    LocalDate.of(2024, 2, 29), LocalDateTime.of(2026, 3, 29, 2, 30), LocalTime.of(23, 59, 59, 1),
                    ZonedDateTime.of(LocalDateTime.of(2026, 10, 25, 2, 30), ZoneId.of("Europe/Paris")).withLaterOffsetAtOverlap(),
                    OffsetDateTime.of(2026, 1, 1, 0, 0, 0, 0, ZoneOffset.ofHoursMinutes(5, 45)));
            assertEquals(times, roundTrip(times, Times.class));
        }

        @Test
        void collectionsMapsOptionalsAndGenericRecords() {
            Line apple = new Line("apple", new BigDecimal("1.25"));
            Line pear = new Line("pear", BigDecimal.TEN);
            Containers containers = new Containers(Set.of(3, 1, 2), List.of("x", "y"),
                    Map.of("fruit", List.of(apple, pear), "none", List.of()), Optional.of(pear), Optional.empty(),
                    new Page<>(List.of(apple), Optional.of(pear)), new ArrayList<>(List.of(0.5, -2.0)));
            Containers decoded = roundTrip(containers, Containers.class);
            assertEquals(containers, decoded);
            assertInstanceOf(Line.class, decoded.page().items().getFirst());
        }

        @Test
        void arraysOfPrimitivesStringsRecordsAndGenerics() {
            @SuppressWarnings({"unchecked", "rawtypes"})
            List<String>[] genericArray = new List[] {List.of("a"), List.of()};
            Arrays arrays = new Arrays(new int[] {1, -2, Integer.MAX_VALUE}, new String[] {"a", null},
                    new Line[] {new Line("l", BigDecimal.ONE)}, genericArray);
            Arrays decoded = roundTrip(arrays, Arrays.class);
            assertArrayEquals(arrays.ints(), decoded.ints());
            assertArrayEquals(arrays.strings(), decoded.strings());
            assertArrayEquals(arrays.lines(), decoded.lines());
            assertArrayEquals(arrays.genericArray(), decoded.genericArray());
        }

        @Test
        void topLevelScalarsAndCollections() {
            assertEquals(42, roundTrip(42, Integer.class));
            assertEquals(42, decode("42", int.class));
            assertEquals('x', roundTrip('x', Character.class));
            assertEquals(Status.PAID, roundTrip(Status.PAID, Status.class));
            assertEquals(Double.NaN, roundTrip(Double.NaN, Double.class));
            assertEquals(List.of("a", "b"), decode("[\"a\",\"b\"]", List.class));
        }
    }

    @Nested
    class Decoding {
        @Test
        void missingPropertyIsRefusedNamingItAndTheComponents() {
            assertEquals("$.text: missing property: record " + Defaults.class.getName() + " needs every component"
                    + " (text, number, flag, ratio, maybe, list, c); an empty Optional is written as null",
                    decodeError("{}", Defaults.class));
            assertEquals(new Defaults(null, 0, false, 0.0, Optional.empty(), null, null),
                    decode("{\"text\":null,\"number\":0,\"flag\":false,\"ratio\":0,\"maybe\":null,\"list\":null,\"c\":null}",
                            Defaults.class));
        }

        @Test
        void unknownPropertyIsRefusedNamingItAndTheComponents() {
            assertEquals("$.extra: unknown property: record " + Plain.class.getName() + " has no component 'extra'"
                    + " (its components: name)", decodeError("{\"name\":\"n\",\"extra\":{\"deep\":[1,2,3]}}", Plain.class));
        }

        @Test
        void typeNamesInThePayloadNeverChooseAClassAndOnlyTheDeclaredTypeIsBuilt() {
            String json = "{\"@class\":\"java.lang.ProcessBuilder\",\"type\":\"java.lang.Runtime\",\"name\":\"n\"}";
            assertTrue(decodeError(json, Plain.class).startsWith("$[\"@class\"]: unknown property"));
            Holder holder = decode("{\"value\":" + json + "}", Holder.class);
            assertEquals(Map.of("@class", "java.lang.ProcessBuilder", "type", "java.lang.Runtime", "name", "n"),
                    holder.value());
        }

        @Test
        void objectTargetsGetPlainJsonValues() {
            Holder holder = decode("{\"value\":[1.5,\"s\",true,null,{\"k\":[]}]}", Holder.class);
            List<Object> expected = new ArrayList<>(List.of(new BigDecimal("1.5"), "s", true));
            expected.add(null);
            expected.add(new LinkedHashMap<>(Map.of("k", List.of())));
            assertEquals(expected, holder.value());
        }

        @Test
        void insignificantWhitespaceIsAccepted() {
            assertEquals(new Cart(List.of(new Line("a", BigDecimal.ONE))),
                    decode(" \n\t{ \"items\" : [ { \"name\" : \"a\" , \"price\" : 1 } ] }\r\n", Cart.class));
        }

        @Test
        void nestingUpTo256LevelsIsAccepted() {
            String json = "[".repeat(256) + "]".repeat(256);
            assertInstanceOf(List.class, decode(json, Object.class));
        }

        @Test
        void nestingDeeperThan256LevelsIsRejectedWithoutStackOverflow() {
            assertTrue(decodeError("[".repeat(257) + "]".repeat(257), Object.class)
                    .endsWith(": malformed JSON at offset 256: nesting is deeper than 256 levels; flatten the payload"));
            assertTrue(decodeError("{\"a\":".repeat(100_000), Object.class).contains("nesting is deeper than 256 levels"));
        }

        @Test
        void invalidUtf8IsADecodeError() {
            PayloadDecodeException e = assertThrows(PayloadDecodeException.class,
                    () -> codec.decode(new byte[] {'"', (byte) 0xC3, '"'}, String.class));
            assertTrue(e.getMessage().startsWith("$: payload is not valid UTF-8"), e.getMessage());
        }

        @Test
        void nullBytesAreADecodeError() {
            assertEquals("$: no payload (null bytes) to decode into java.lang.String",
                    assertThrows(PayloadDecodeException.class, () -> codec.decode(null, String.class)).getMessage());
        }

        @Test
        void constructorValidationFailureIsADecodeError() {
            assertEquals("$: record io.binomic.core.internal.codec.JdkJsonCodecTest$Positive rejected the values:"
                    + " value must be positive, was -1", decodeError("{\"value\":-1}", Positive.class));
        }

        @Test
        void recordInAPackageNotOpenToTheCodecSaysHowToOpenIt() throws ClassNotFoundException {
            Class<?> internalRecord = Class.forName("jdk.internal.util.OSVersion");
            PayloadDecodeException e = assertThrows(PayloadDecodeException.class,
                    () -> codec.decode("{}".getBytes(StandardCharsets.UTF_8), internalRecord));
            assertEquals("$: cannot access record jdk.internal.util.OSVersion in module java.base:"
                    + " open package jdk.internal.util to io.binomic.core"
                    + " (add `opens jdk.internal.util to io.binomic.core;` to module-info.java)", e.getMessage());
        }

        @Test
        void unsupportedTargetTypeIsADecodeError() {
            assertEquals("$.value: cannot decode into java.lang.StringBuilder: the type is not supported (supported:"
                    + " records, String, boolean, numbers, BigDecimal, BigInteger, char, enums, UUID, java.time values,"
                    + " Optional, collections, maps with String keys and arrays); use a record",
                    decodeError("{\"value\":\"x\"}", StringBuilderHolder.class));
            assertTrue(decodeError("[]", java.io.Serializable.class)
                    .startsWith("$: cannot decode into java.io.Serializable: the type is not supported"));
        }

        record StringBuilderHolder(StringBuilder value) { }

        @ParameterizedTest(name = "[{index}] {0}")
        @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            # payload                                                             | message
            {"items":[{"name":"a","price":1},{"name":"b","price":2},{"price":"abc"}]} | $.items[2].price: expected a number, got "abc"
            {"items":{}}                                                          | $.items: expected an array, got an object
            {"items":[[]]}                                                        | $.items[0]: expected an object, got an array
            {"items":[{"name":7}]}                                                | $.items[0].name: expected a string, got 7
            {"items":[{"name":"a","price":1}],}                                   | $: malformed JSON at offset 34: expected a property name in double quotes, got "}"
            {"items":[1,2,]}                                                      | $.items[2]: malformed JSON at offset 14: expected a value, got "]"
            {"items":[]} x                                                        | $: malformed JSON at offset 13: unexpected "x" after the JSON value
            ``                                                                    | $: malformed JSON at offset 0: expected a value, got the end of the payload
            {"items":[{"name":"a\\q"}]}                                           | $.items[0].name: malformed JSON at offset 22: invalid escape \\q in a string
            {"items":[{"name":"abc                                                | $.items[0].name: malformed JSON at offset 22: unterminated string
            {"items":[{"price":012}]}                                             | $.items[0]: malformed JSON at offset 20: expected ',' or '}', got "1"
            {"items":[{"price":1.}]}                                              | $.items[0].price: malformed JSON at offset 21: invalid number "1.": digits must follow the decimal point
            {"items":[{"price":tru}]}                                             | $.items[0].price: malformed JSON at offset 19: expected a value, got "t"
            {"items":[],"items":[]}                                               | $.items: malformed JSON at offset 19: duplicate property "items"
            """)
        void malformedOrMismatchedPayloadNamesThePath(String payload, String message) {
            assertEquals(message, decodeError(payload, Cart.class));
        }

        @ParameterizedTest(name = "[{index}] {0}")
        @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"quantity":1.5}         | $.quantity: expected a whole number in the range of Integer, got 1.5
            {"quantity":3000000000}  | $.quantity: expected a whole number in the range of Integer, got 3000000000
            {"quantity":null}        | $.quantity: expected a number, got null
            {"quantity":"1"}         | $.quantity: expected a number, got "1"
            {"status":"LOST"}        | $.status: expected one of [NEW, PAID], got "LOST"
            {"note":5}               | $.note: expected a string, got 5
            {"price":1e400000}       | ok
            {"quantity":1}           | $.id: missing property
            """)
        void numbersEnumsAndOptionalsAreChecked(String payload, String message) {
            if (message.equals("ok")) {
                String complete = "{\"id\":\"o\",\"quantity\":1,\"tags\":[],\"note\":null,\"status\":\"NEW\",";
                assertEquals(new BigDecimal("1e400000"), decode(complete + payload.substring(1), Order.class).price());
            } else {
                assertTrue(decodeError(payload, Order.class).startsWith(message), decodeError(payload, Order.class));
            }
        }

        @Test
        void hugeExponentIsRefusedForBigIntegerInsteadOfAllocatingIt() {
            assertEquals("$: expected a whole number in the range of BigInteger, got 1e999999999",
                    decodeError("1e999999999", BigInteger.class));
        }

        @Test
        void unicodeEscapeTakesOnlyAsciiHexDigits() {
            assertEquals("é", decode("\"\\u00E9\"", String.class));
            // U+FF10 is a full-width zero: Character.digit reads it as 0, JSON does not.
            assertEquals("$: malformed JSON at offset 3: invalid \\u escape \\u\uFF10\uFF10e9",
                    decodeError("\"\\u\uFF10\uFF10e9\"", String.class));
        }

        @Test
        void controlCharactersMustBeEscapedInStrings() {
            assertEquals("$: malformed JSON at offset 3: control character U+000A must be escaped in a string",
                    decodeError("\"a\nb\"", String.class));
        }
    }
}
