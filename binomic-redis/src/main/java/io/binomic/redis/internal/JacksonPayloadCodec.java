package io.binomic.redis.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.jsontype.BasicPolymorphicTypeValidator;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import io.binomic.api.PayloadDecodeException;
import io.binomic.api.spi.PayloadCodec;
import java.io.IOException;
import java.lang.reflect.InaccessibleObjectException;

/**
 * JSON payloads through Jackson: records, java.time values, unknown properties ignored (a newer
 * producer may add fields). No default typing and a type validator that allows no class names:
 * a payload carrying {@code "@class"} can never choose what gets instantiated, which is the hole
 * that turns a queue into a remote-code-execution channel.
 */
public final class JacksonPayloadCodec implements PayloadCodec {
    private final ObjectMapper mapper = JsonMapper.builder()
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .addModule(new JavaTimeModule())
            // Denies every class-name based subtype, even for types annotated with @JsonTypeInfo(use = CLASS).
            .polymorphicTypeValidator(BasicPolymorphicTypeValidator.builder().build())
            .build();

    @Override
    public String id() {
        return "jackson";
    }

    /** Above the JDK-only codec of the core: when Jackson is present, it is the better JSON. */
    @Override
    public int priority() {
        return 10;
    }

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
        try {
            return mapper.readValue(bytes, type);
        } catch (IOException | RuntimeException e) {
            throw new PayloadDecodeException("cannot decode the payload into " + type.getName() + ": " + message(e)
                    + accessHint(type, e), e);
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
