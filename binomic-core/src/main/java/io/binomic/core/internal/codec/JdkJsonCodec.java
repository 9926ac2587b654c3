package io.binomic.core.internal.codec;

import io.binomic.api.PayloadDecodeException;
import io.binomic.api.spi.PayloadCodec;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * A JSON codec on the JDK alone (id {@code json-jdk}), for task arguments.
 *
 * <p>Writes compact UTF-8 JSON. Supported: records (by component, nested and generic), String,
 * boolean, every primitive number and its box, BigDecimal, BigInteger, char, enums (by name),
 * UUID and java.time values (ISO-8601 strings), Optional (empty is {@code null}), collections,
 * maps with String keys and arrays. NaN and infinities are written as strings.
 *
 * <p>Decoding follows the declared type only; a type name inside the payload is just data.
 * It is strict, as the {@link PayloadCodec} contract asks: an unknown property, a missing
 * component (an empty Optional is written as {@code null}, so it is never absent), {@code null}
 * for a primitive and a fraction for an integer are refused. Any malformed payload or type
 * mismatch is a {@link PayloadDecodeException} whose message starts with the path, such as
 * {@code $.items[2].price: expected a number, got "abc"}.
 *
 * <p>Records of other modules must be open to {@code io.binomic.core}
 * ({@code opens my.pkg to io.binomic.core;}); the error says so when they are not.
 */
public final class JdkJsonCodec implements PayloadCodec {
    @Override
    public String id() { return "json-jdk"; }

    /**
     * @throws IllegalArgumentException naming the path and type of a value that has no JSON form
     *     here (a class that is not a record, say), and the fix
     */
    @Override
    public byte[] encode(Object value) { return JsonWriter.write(value).getBytes(StandardCharsets.UTF_8); }

    @Override
    public <T> T decode(byte[] bytes, Class<T> type) {
        Objects.requireNonNull(type, "type");
        if (bytes == null) {
            throw new PayloadDecodeException("$: no payload (null bytes) to decode into " + type.getName());
        }
        Object tree = JsonParser.parse(utf8(bytes));
        Object value = JsonBinder.bind(tree, type, JsonPath.ROOT);
        if (type.isPrimitive()) {
            @SuppressWarnings("unchecked") // T is the primitive's box; Class.cast would refuse it
            T boxed = (T) value;
            return boxed;
        }
        return type.cast(value);
    }

    private static String utf8(byte[] bytes) {
        try {
            // A strict decoder: the default replaces bad bytes with U+FFFD and would hide corruption.
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            throw new PayloadDecodeException("$: payload is not valid UTF-8: " + e.getMessage(), e);
        }
    }
}
