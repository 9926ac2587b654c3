package io.binomic.core;

import io.binomic.api.PayloadDecodeException;
import io.binomic.api.spi.PayloadCodec;
import java.nio.charset.StandardCharsets;

/**
 * A codec for String and Integer arguments, so worker tests do not depend on the JSON codec.
 * A payload starting with {@code !} never decodes: tests use it for undecodable messages.
 */
public final class TextCodec implements PayloadCodec {
    public TextCodec() {
    }

    @Override
    public String id() {
        return "text";
    }

    @Override
    public byte[] encode(Object value) {
        return String.valueOf(value).getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public <T> T decode(byte[] bytes, Class<T> type) {
        String text = new String(bytes, StandardCharsets.UTF_8);
        if (text.startsWith("!")) {
            throw new PayloadDecodeException("$: undecodable on purpose: " + text);
        }
        if (type == String.class) {
            return type.cast(text);
        }
        if (type == Integer.class) {
            try {
                return type.cast(Integer.valueOf(text));
            } catch (NumberFormatException e) {
                throw new PayloadDecodeException("$: expected an integer, got " + text, e);
            }
        }
        throw new PayloadDecodeException("$: TextCodec cannot decode " + type.getName());
    }
}
