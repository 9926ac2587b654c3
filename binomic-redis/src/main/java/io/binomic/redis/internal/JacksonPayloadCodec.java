package io.binomic.redis.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.jsontype.BasicPolymorphicTypeValidator;
import com.fasterxml.jackson.databind.type.LogicalType;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.binomic.api.PayloadDecodeException;
import io.binomic.api.spi.PayloadCodec;
import java.io.IOException;
import java.lang.reflect.InaccessibleObjectException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * JSON payloads through Jackson (id {@code jackson}), used only when
 * {@code BinomicConfig.payloadCodec("jackson")} asks for it. It writes the same JSON as the JDK
 * codec of the core and is as strict (the codec contract of {@link PayloadCodec}): records,
 * {@code Optional} (empty is {@code null}), java.time values as ISO-8601 text; an unknown
 * property, a missing component, {@code null} for a primitive, a fraction for an integer, a
 * number for a string (or the reverse), an enum index, trailing data and duplicate properties
 * are refused with a message starting with the field's path ({@code $.lines[1].quantity: ...}).
 *
 * <p>No default typing and a type validator that allows no class names: a payload carrying
 * {@code "@class"} can never choose what gets instantiated, which is the hole that turns a queue
 * into a remote-code-execution channel.
 */
public final class JacksonPayloadCodec implements PayloadCodec {
    private static final Pattern MISSING_PROPERTY = Pattern.compile("Missing required creator property '([^']*)'");
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_$][A-Za-z0-9_$]*");

    private final ObjectMapper mapper = JsonMapper.builder()
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_NUMBERS_FOR_ENUMS)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .withCoercionConfig(LogicalType.Textual, c -> c
                    .setCoercion(CoercionInputShape.Integer, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Float, CoercionAction.Fail)
                    .setCoercion(CoercionInputShape.Boolean, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Boolean, c -> c.setCoercion(CoercionInputShape.Integer, CoercionAction.Fail))
            .withCoercionConfig(LogicalType.Integer, c -> c.setCoercion(CoercionInputShape.Float, CoercionAction.Fail))
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS)
            .addModule(new Jdk8Module())
            .addModule(new JavaTimeModule())
            // Denies every class-name based subtype, even for types annotated with @JsonTypeInfo(use = CLASS).
            .polymorphicTypeValidator(BasicPolymorphicTypeValidator.builder().build())
            .build();

    @Override
    public String id() { return "jackson"; }

    @Override
    public byte[] encode(Object value) {
        try {
            return mapper.writeValueAsBytes(value);
        } catch (JsonProcessingException | RuntimeException e) {
            String type = value == null ? "null" : value.getClass().getName();
            throw new IllegalArgumentException("cannot encode a " + type + " as JSON: " + message(e)
                    + accessHint(value == null ? null : value.getClass(), e), e);
        }
    }

    @Override
    public <T> T decode(byte[] bytes, Class<T> type) {
        if (bytes == null) {
            throw new PayloadDecodeException("$: no payload (null bytes) to decode into " + type.getName());
        }
        try {
            return mapper.readValue(bytes, type);
        } catch (IOException | RuntimeException e) {
            throw new PayloadDecodeException(path(e) + ": " + message(e) + " (decoding the payload into " + type.getName() + ")"
                    + accessHint(type, e), e);
        }
    }

    /**
     * Where the failure is, as the JDK codec says it ({@code $.lines[1].quantity}). Jackson keeps
     * the path of a missing creator property at its record, so the property is taken from the message.
     */
    private static String path(Exception e) {
        StringBuilder path = new StringBuilder("$");
        if (e instanceof JsonMappingException mapping) {
            for (JsonMappingException.Reference reference : mapping.getPath()) {
                if (reference.getFieldName() != null) {
                    appendProperty(path, reference.getFieldName());
                } else if (reference.getIndex() >= 0) {
                    path.append('[').append(reference.getIndex()).append(']');
                }
            }
            Matcher missing = MISSING_PROPERTY.matcher(String.valueOf(mapping.getOriginalMessage()));
            if (missing.find()) {
                appendProperty(path, missing.group(1));
            }
        }
        return path.toString();
    }

    private static void appendProperty(StringBuilder path, String name) {
        if (IDENTIFIER.matcher(name).matches()) {
            path.append('.').append(name);
        } else {
            path.append("[\"").append(name.replace("\\", "\\\\").replace("\"", "\\\"")).append("\"]");
        }
    }

    private static String message(Exception e) {
        return e instanceof JsonProcessingException j ? j.getOriginalMessage() : String.valueOf(e.getMessage());
    }

    /**
     * Jackson reaches constructors and accessors reflectively; in a named module that needs the
     * package opened to it. Say so, with the exact line to add.
     */
    private static String accessHint(Class<?> type, Throwable failure) {
        boolean accessProblem = false;
        for (Throwable c = failure; c != null; c = c.getCause()) {
            String m = String.valueOf(c.getMessage());
            if (c instanceof InaccessibleObjectException || c instanceof IllegalAccessException
                    || m.contains("setAccess") || m.contains("does not \"opens") || m.contains("does not \"exports")) {
                accessProblem = true;
                break;
            }
        }
        if (!accessProblem || type == null) {
            return "";
        }
        Module module = type.getModule();
        String where = module.isNamed() ? " to module-info.java of module " + module.getName() : " to your module-info.java";
        return "; Jackson cannot access " + type.getName() + ": add 'opens " + type.getPackageName()
                + " to com.fasterxml.jackson.databind;'" + where;
    }
}
