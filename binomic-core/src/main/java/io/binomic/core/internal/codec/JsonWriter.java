package io.binomic.core.internal.codec;

import java.lang.reflect.Array;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.InvocationTargetException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.IntStream;

/** Writes Java values as compact JSON, choosing the representation from each value's runtime class. */
final class JsonWriter {
    /** Types written as their {@code toString()} in a JSON string (ISO-8601 for java.time). */
    private static final Set<Class<?>> TEXT_TYPES = Set.of(UUID.class, Instant.class, Duration.class,
            LocalDate.class, LocalDateTime.class, LocalTime.class, ZonedDateTime.class, OffsetDateTime.class);

    static final String SUPPORTED_TYPES = "records, String, boolean, numbers, BigDecimal, BigInteger, char,"
            + " enums, UUID, java.time values, Optional, collections, maps with String keys and arrays";

    private final StringBuilder out = new StringBuilder();

    private JsonWriter() {
    }

    /**
     * The JSON text of {@code value}.
     *
     * @throws IllegalArgumentException naming the path and type of a value the codec cannot write
     */
    static String write(Object value) {
        JsonWriter writer = new JsonWriter();
        writer.writeValue(value, JsonPath.ROOT, 0);
        return writer.out.toString();
    }

    private void writeValue(Object value, JsonPath path, int depth) {
        if (depth > JsonParser.MAX_DEPTH) {
            // Such a payload could not be decoded; it is also how a self-containing collection shows.
            throw new IllegalArgumentException("cannot encode " + path + ": nesting is deeper than "
                    + JsonParser.MAX_DEPTH + " levels (is a collection containing itself?)");
        }
        switch (value) {
            case null -> out.append("null");
            case String s -> out.append(quote(s));
            case Boolean b -> out.append(b);
            case Integer _, Long _, Short _, Byte _, BigInteger _ -> out.append(value);
            case BigDecimal d -> out.append(d);
            case Double d -> writeFloatingPoint(d, d.isNaN() || d.isInfinite());
            case Float f -> writeFloatingPoint(f, f.isNaN() || f.isInfinite());
            case Character c -> out.append(quote(c.toString()));
            case Enum<?> e -> out.append(quote(e.name()));
            case Optional<?> o -> writeValue(o.orElse(null), path, depth);
            case Record r -> writeRecord(r, path, depth + 1);
            case Collection<?> c -> writeCollection(c, path, depth + 1);
            case Map<?, ?> m -> writeMap(m, path, depth + 1);
            default -> {
                if (TEXT_TYPES.contains(value.getClass())) {
                    out.append(quote(value.toString()));
                } else if (value.getClass().isArray()) {
                    List<Object> elements = IntStream.range(0, Array.getLength(value)).mapToObj(i -> Array.get(value, i)).toList();
                    writeCollection(elements, path, depth + 1);
                } else {
                    throw new IllegalArgumentException("cannot encode " + path + ": type " + value.getClass().getName()
                            + " is not supported (supported: " + SUPPORTED_TYPES + "); use a record");
                }
            }
        }
    }

    private void writeFloatingPoint(Number number, boolean nonFinite) {
        // JSON has no NaN or Infinity: they travel as the strings Java's parsers read back.
        if (nonFinite) {
            out.append(quote(number.toString()));
        } else {
            out.append(number);
        }
    }

    private void writeRecord(Record record, JsonPath path, int depth) {
        RecordShape shape;
        try {
            shape = RecordShape.of(record.getClass());
        } catch (InaccessibleObjectException e) {
            throw new IllegalArgumentException("cannot encode " + path + ": " + RecordShape.openPackageHint(record.getClass()), e);
        }
        out.append('{');
        boolean first = true;
        for (RecordShape.Component component : shape.components()) {
            writeProperty(first, component.name(), read(record, component, path), path, depth);
            first = false;
        }
        out.append('}');
    }

    /** One property of the object being written: after a comma, unless it is the object's {@code first}. */
    private void writeProperty(boolean first, String name, Object value, JsonPath path, int depth) {
        if (!first) {
            out.append(',');
        }
        out.append(quote(name));
        out.append(':');
        writeValue(value, path.property(name), depth);
    }

    private static Object read(Record record, RecordShape.Component component, JsonPath path) {
        try {
            return component.accessor().invoke(record);
        } catch (IllegalAccessException e) {
            throw new IllegalArgumentException("cannot encode " + path + ": " + RecordShape.openPackageHint(record.getClass()), e);
        } catch (InvocationTargetException e) {
            throw new IllegalArgumentException("cannot encode " + path.property(component.name()) + ": accessor "
                    + record.getClass().getName() + "." + component.name() + "() threw " + e.getCause(), e.getCause());
        }
    }

    private void writeCollection(Collection<?> collection, JsonPath path, int depth) {
        out.append('[');
        int index = 0;
        for (Object element : collection) {
            if (index > 0) {
                out.append(',');
            }
            writeValue(element, path.index(index++), depth);
        }
        out.append(']');
    }

    private void writeMap(Map<?, ?> map, JsonPath path, int depth) {
        out.append('{');
        boolean first = true;
        for (Map.Entry<?, ?> entry : map.entrySet()) {
            if (!(entry.getKey() instanceof String key)) {
                throw new IllegalArgumentException("cannot encode " + path + ": map key " + entry.getKey()
                        + " is not a String; JSON object keys are strings, so use Map<String, ...> or a list of records");
            }
            writeProperty(first, key, entry.getValue(), path, depth);
            first = false;
        }
        out.append('}');
    }

    /**
     * {@code value} as a JSON string literal. Control characters and unpaired surrogates are
     * escaped: the latter have no UTF-8 form and would otherwise turn into '?'.
     */
    static String quote(String value) {
        StringBuilder quoted = new StringBuilder(value.length() + 2).append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> quoted.append("\\\"");
                case '\\' -> quoted.append("\\\\");
                case '\n' -> quoted.append("\\n");
                case '\r' -> quoted.append("\\r");
                case '\t' -> quoted.append("\\t");
                case '\b' -> quoted.append("\\b");
                case '\f' -> quoted.append("\\f");
                default -> {
                    if (c < 0x20 || isUnpairedSurrogate(value, i)) {
                        quoted.append(String.format("\\u%04x", (int) c));
                    } else {
                        quoted.append(c);
                    }
                }
            }
        }
        return quoted.append('"').toString();
    }

    private static boolean isUnpairedSurrogate(String value, int i) {
        char c = value.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 >= value.length() || !Character.isLowSurrogate(value.charAt(i + 1));
        }
        if (Character.isLowSurrogate(c)) {
            return i == 0 || !Character.isHighSurrogate(value.charAt(i - 1));
        }
        return false;
    }
}
