package io.binomic.core.internal.codec;

import io.binomic.api.PayloadDecodeException;
import io.binomic.core.internal.codec.JsonParser.JsonNumber;
import java.lang.reflect.Array;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.InaccessibleObjectException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

/**
 * Turns a parsed JSON tree into an instance of a declared type. The declared type alone decides
 * what gets built: type names inside the payload are ordinary data, never instructions, because
 * letting a payload choose classes is how deserialization exploits work.
 */
final class JsonBinder {
    /** Text-encoded types: what the error message calls them, and how to read them. */
    private record TextType(String description, Function<String, Object> parser) { }

    private static final Map<Class<?>, TextType> TEXT_TYPES = Map.of(
            UUID.class, new TextType("a UUID", UUID::fromString),
            Instant.class, new TextType("an ISO-8601 Instant", Instant::parse),
            Duration.class, new TextType("an ISO-8601 Duration", Duration::parse),
            LocalDate.class, new TextType("an ISO-8601 LocalDate", LocalDate::parse),
            LocalDateTime.class, new TextType("an ISO-8601 LocalDateTime", LocalDateTime::parse),
            LocalTime.class, new TextType("an ISO-8601 LocalTime", LocalTime::parse),
            ZonedDateTime.class, new TextType("an ISO-8601 ZonedDateTime", ZonedDateTime::parse),
            OffsetDateTime.class, new TextType("an ISO-8601 OffsetDateTime", OffsetDateTime::parse));

    /** Whole-number types, and how each reads a whole number (throwing ArithmeticException when it is out of range). */
    private static final Map<Class<?>, Function<BigInteger, Object>> WHOLE_NUMBER_TYPES = Map.of(BigInteger.class, i -> i,
            Long.class, BigInteger::longValueExact, Integer.class, BigInteger::intValueExact, Short.class, BigInteger::shortValueExact,
            Byte.class, BigInteger::byteValueExact);

    /** A BigInteger of more digits than this is refused: "1e999999999" must not allocate gigabytes. */
    private static final int MAX_INTEGER_DIGITS = 10_000;

    private JsonBinder() {
    }

    /** Builds a {@code type} from {@code node}, a tree made by {@link JsonParser}. */
    static Object bind(Object node, Type type, JsonPath path) {
        Class<?> raw = rawClass(type);
        if (raw == Optional.class) {
            return node == null ? Optional.empty() : Optional.of(bind(node, typeArgument(type, 0), path));
        }
        if (node == null) {
            if (raw.isPrimitive()) {
                throw mismatch(path, raw == boolean.class ? "true or false"
                        : raw == char.class ? "a one-character string" : "a number", null);
            }
            return null;
        }
        if (raw.isPrimitive()) {
            return bindScalar(node, primitiveBox(raw), path);
        }
        if (raw.isRecord()) {
            return bindRecord(node, type, raw, path);
        }
        if (raw.isEnum()) {
            return bindEnum(node, raw, path);
        }
        if (raw.isArray()) {
            return bindArray(node, type, raw, path);
        }
        if (raw == Object.class) {
            return plain(node);
        }
        // Interfaces such as List, Set, Collection or Map, and the concrete classes built here.
        if (Iterable.class.isAssignableFrom(raw) && raw.isAssignableFrom(ArrayList.class)) {
            return bindElements(node, typeArgument(type, 0), path, new ArrayList<>());
        }
        if (Set.class.isAssignableFrom(raw) && raw.isAssignableFrom(LinkedHashSet.class)) {
            return bindElements(node, typeArgument(type, 0), path, new LinkedHashSet<>());
        }
        if (Map.class.isAssignableFrom(raw) && raw.isAssignableFrom(LinkedHashMap.class)) {
            return bindMap(node, type, path);
        }
        return bindScalar(node, raw, path);
    }

    /** Whether {@link #bindScalar} reads {@code type}: what {@link ArgumentTypes} checks declared types against. */
    static boolean isScalar(Class<?> type) {
        return type == String.class || type == Boolean.class || type == Character.class || type == Double.class
                || type == Float.class || type == BigDecimal.class || WHOLE_NUMBER_TYPES.containsKey(type)
                || TEXT_TYPES.containsKey(type);
    }

    private static Object bindScalar(Object node, Class<?> type, JsonPath path) {
        if (type == String.class) {
            return expect(node, String.class, "a string", path);
        }
        if (type == Boolean.class) {
            return expect(node, Boolean.class, "true or false", path);
        }
        if (type == Character.class) {
            String text = expect(node, String.class, "a one-character string", path);
            if (text.length() != 1) {
                throw mismatch(path, "a one-character string", node);
            }
            return text.charAt(0);
        }
        if (type == Double.class || type == Float.class) {
            return bindFloatingPoint(node, type, path);
        }
        if (type == BigDecimal.class || WHOLE_NUMBER_TYPES.containsKey(type)) {
            return bindExactNumber(node, type, path);
        }
        TextType textType = TEXT_TYPES.get(type);
        if (textType != null) {
            String text = expect(node, String.class, textType.description(), path);
            try {
                return textType.parser().apply(text);
            } catch (RuntimeException e) {
                throw mismatch(path, textType.description(), node);
            }
        }
        throw new PayloadDecodeException(path + ": cannot decode into " + type.getName()
                + ": the type is not supported (supported: " + JsonWriter.SUPPORTED_TYPES + "); use a record");
    }

    private static Object bindExactNumber(Object node, Class<?> type, JsonPath path) {
        BigDecimal number = new BigDecimal(expect(node, JsonNumber.class, "a number", path).text());
        if (type == BigDecimal.class) {
            return number;
        }
        try {
            if (number.precision() - number.scale() > MAX_INTEGER_DIGITS) {
                throw new ArithmeticException("too many digits");
            }
            return WHOLE_NUMBER_TYPES.get(type).apply(number.toBigIntegerExact());
        } catch (ArithmeticException e) {
            throw mismatch(path, "a whole number in the range of " + type.getSimpleName(), node);
        }
    }

    private static Object bindFloatingPoint(Object node, Class<?> type, JsonPath path) {
        // NaN and the infinities arrive as strings, which is how the writer sends them.
        if (node instanceof String text && (text.equals("NaN") || text.equals("Infinity") || text.equals("-Infinity"))) {
            return type == Double.class ? Double.valueOf(text) : Float.valueOf(text);
        }
        String text = expect(node, JsonNumber.class, "a number", path).text();
        if (type == Double.class) {
            double value = Double.parseDouble(text);
            if (Double.isInfinite(value)) {
                throw mismatch(path, "a number in the range of double", node);
            }
            return value;
        }
        float value = Float.parseFloat(text);
        if (Float.isInfinite(value)) {
            throw mismatch(path, "a number in the range of float", node);
        }
        return value;
    }

    private static Object bindEnum(Object node, Class<?> type, JsonPath path) {
        Object[] constants = type.getEnumConstants();
        String expected = "one of " + Arrays.stream(constants).map(c -> ((Enum<?>) c).name()).toList();
        String name = expect(node, String.class, expected, path);
        for (Object constant : constants) {
            if (((Enum<?>) constant).name().equals(name)) {
                return constant;
            }
        }
        throw mismatch(path, expected, node);
    }

    private static Object bindRecord(Object node, Type type, Class<?> raw, JsonPath path) {
        Map<?, ?> object = expect(node, Map.class, "an object", path);
        RecordShape shape;
        try {
            shape = RecordShape.of(raw);
        } catch (InaccessibleObjectException e) {
            throw new PayloadDecodeException(path + ": " + RecordShape.openPackageHint(raw), e);
        }
        Map<TypeVariable<?>, Type> typeArguments = typeArguments(type, raw);
        List<RecordShape.Component> components = shape.components();
        Object[] arguments = new Object[components.size()];
        // Strict, in the payload's order (as Jackson reports): a property the record lacks is
        // refused, because binding what is left would run the handler with another producer's data.
        for (Map.Entry<?, ?> property : object.entrySet()) {
            String name = (String) property.getKey();
            int i = shape.indexOf(name);
            if (i < 0) {
                throw new PayloadDecodeException(path.property(name) + ": unknown property: record " + raw.getName()
                        + " has no component '" + name + "' (its components: " + shape.componentNames() + ")");
            }
            RecordShape.Component component = components.get(i);
            arguments[i] = bind(property.getValue(), resolve(component.genericType(), typeArguments), path.property(name));
        }
        // A missing property is refused too, even for an Optional: the writer sends null for an
        // empty one, so an absent property means the payload was written for another record.
        for (RecordShape.Component component : components) {
            if (!object.containsKey(component.name())) {
                throw new PayloadDecodeException(path.property(component.name()) + ": missing property: record "
                        + raw.getName() + " needs every component (" + shape.componentNames()
                        + "); an empty Optional is written as null");
            }
        }
        try {
            return shape.constructor().newInstance(arguments);
        } catch (InvocationTargetException e) {
            throw new PayloadDecodeException(path + ": record " + raw.getName() + " rejected the values: "
                    + e.getCause().getMessage(), e.getCause());
        } catch (IllegalAccessException e) {
            throw new PayloadDecodeException(path + ": " + RecordShape.openPackageHint(raw), e);
        } catch (ReflectiveOperationException e) {
            throw new PayloadDecodeException(path + ": cannot create record " + raw.getName() + ": " + e, e);
        }
    }

    private static Object bindArray(Object node, Type type, Class<?> raw, JsonPath path) {
        List<?> elements = expect(node, List.class, "an array", path);
        Type componentType = type instanceof GenericArrayType generic ? generic.getGenericComponentType() : raw.getComponentType();
        Object array = Array.newInstance(raw.getComponentType(), elements.size());
        for (int i = 0; i < elements.size(); i++) {
            Array.set(array, i, bind(elements.get(i), componentType, path.index(i)));
        }
        return array;
    }

    private static <C extends Collection<Object>> C bindElements(Object node, Type elementType, JsonPath path, C into) {
        List<?> elements = expect(node, List.class, "an array", path);
        for (int i = 0; i < elements.size(); i++) {
            into.add(bind(elements.get(i), elementType, path.index(i)));
        }
        return into;
    }

    private static Map<String, Object> bindMap(Object node, Type type, JsonPath path) {
        Type keyType = typeArgument(type, 0);
        if (keyType != String.class && keyType != Object.class) {
            throw new PayloadDecodeException(path + ": cannot decode into " + type.getTypeName()
                    + ": JSON object keys are strings, so declare Map<String, ...>");
        }
        Type valueType = typeArgument(type, 1);
        Map<?, ?> object = expect(node, Map.class, "an object", path);
        Map<String, Object> map = new LinkedHashMap<>();
        object.forEach((key, value) -> map.put((String) key, bind(value, valueType, path.property((String) key))));
        return map;
    }

    /** The tree as plain Java values, for targets declared as {@code Object}. */
    private static Object plain(Object node) {
        return switch (node) {
            case JsonNumber number -> new BigDecimal(number.text());
            case List<?> list -> {
                List<Object> copy = new ArrayList<>(list.size());
                list.forEach(element -> copy.add(element == null ? null : plain(element)));
                yield copy;
            }
            case Map<?, ?> map -> {
                Map<String, Object> copy = new LinkedHashMap<>();
                map.forEach((key, value) -> copy.put((String) key, value == null ? null : plain(value)));
                yield copy;
            }
            default -> node; // String or Boolean
        };
    }

    private static <T> T expect(Object node, Class<T> kind, String expected, JsonPath path) {
        if (!kind.isInstance(node)) {
            throw mismatch(path, expected, node);
        }
        return kind.cast(node);
    }

    private static PayloadDecodeException mismatch(JsonPath path, String expected, Object node) {
        return new PayloadDecodeException(path + ": expected " + expected + ", got " + describe(node));
    }

    private static String describe(Object node) {
        return switch (node) {
            case null -> "null";
            case String text -> JsonWriter.quote(text.length() > 40 ? text.substring(0, 40) + "..." : text);
            case Map<?, ?> _ -> "an object";
            case List<?> _ -> "an array";
            default -> node.toString(); // a number's text, true or false
        };
    }

    private static Class<?> primitiveBox(Class<?> primitive) {
        return Array.get(Array.newInstance(primitive, 1), 0).getClass();
    }

    /** The type arguments of a generic record, or their bounds when used raw. */
    private static Map<TypeVariable<?>, Type> typeArguments(Type type, Class<?> raw) {
        TypeVariable<?>[] parameters = raw.getTypeParameters();
        Map<TypeVariable<?>, Type> arguments = new HashMap<>();
        for (int i = 0; i < parameters.length; i++) {
            arguments.put(parameters[i], type instanceof ParameterizedType p
                    ? p.getActualTypeArguments()[i]
                    : parameters[i].getBounds()[0]);
        }
        return arguments;
    }

    /** {@code type} with the record's type variables replaced by their arguments. */
    private static Type resolve(Type type, Map<TypeVariable<?>, Type> arguments) {
        return switch (type) {
            case TypeVariable<?> variable -> arguments.getOrDefault(variable, variable.getBounds()[0]);
            case ParameterizedType p -> new ResolvedParameterizedType((Class<?>) p.getRawType(),
                    Arrays.stream(p.getActualTypeArguments()).map(a -> resolve(a, arguments)).toArray(Type[]::new));
            case GenericArrayType array -> {
                Type component = resolve(array.getGenericComponentType(), arguments);
                yield component instanceof Class<?> c ? c.arrayType() : new ResolvedGenericArrayType(component);
            }
            case WildcardType wildcard -> resolve(wildcard.getUpperBounds()[0], arguments);
            default -> type;
        };
    }

    static Type typeArgument(Type type, int index) {
        if (type instanceof ParameterizedType p) {
            Type argument = p.getActualTypeArguments()[index];
            return argument instanceof WildcardType wildcard ? wildcard.getUpperBounds()[0] : argument;
        }
        return Object.class; // a raw type: elements read as plain JSON values
    }

    static Class<?> rawClass(Type type) {
        return switch (type) {
            case Class<?> c -> c;
            case ParameterizedType p -> (Class<?>) p.getRawType();
            case GenericArrayType array -> rawClass(array.getGenericComponentType()).arrayType();
            case WildcardType wildcard -> rawClass(wildcard.getUpperBounds()[0]);
            case TypeVariable<?> variable -> rawClass(variable.getBounds()[0]);
            default -> throw new IllegalArgumentException("unsupported type " + type);
        };
    }

    private record ResolvedParameterizedType(Class<?> raw, Type[] arguments) implements ParameterizedType {
        @Override
        public Type[] getActualTypeArguments() { return arguments.clone(); }

        @Override
        public Type getRawType() { return raw; }

        @Override
        public Type getOwnerType() { return null; }
    }

    private record ResolvedGenericArrayType(Type component) implements GenericArrayType {
        @Override
        public Type getGenericComponentType() { return component; }
    }
}
