package io.binomic.core.internal.codec;

import io.binomic.api.PayloadDecodeException;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.PayloadCodec;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * The codec a worker decodes with: the codec that wrote each message (its {@link Message#CODEC}
 * header), or the instance's own codec for a message without that header.
 */
public final class WorkerCodec implements PayloadCodec {
    private final PayloadCodec own;
    private final Map<String, PayloadCodec> others;

    /**
     * @param own the instance's codec, used to encode and to decode messages without a codec header
     * @param found every codec available by id, to decode what other codecs wrote
     */
    public WorkerCodec(PayloadCodec own, Map<String, PayloadCodec> found) {
        this.own = Objects.requireNonNull(own, "own");
        this.others = Map.copyOf(found);
    }

    /** {@code codec} itself if it is a worker codec, else one that decodes with {@code codec} alone. */
    public static WorkerCodec of(PayloadCodec codec) {
        return codec instanceof WorkerCodec w ? w : new WorkerCodec(codec, Map.of());
    }

    @Override
    public String id() { return own.id(); }

    @Override
    public byte[] encode(Object value) { return own.encode(value); }

    @Override
    public <T> T decode(byte[] bytes, Class<T> type) { return own.decode(bytes, type); }

    /**
     * Decodes {@code message}'s payload with the codec that wrote it. A payload that decodes to
     * nothing ({@code null}) is refused: {@code submit} never writes one for a task that takes an argument.
     */
    public <T> T decode(Message message, Class<T> type) {
        T value = decodeWithWriter(message, type);
        if (value == null) {
            throw new PayloadDecodeException("$: null, but the task takes a " + type.getName()
                    + " (submit never writes null for a task that takes an argument; the message was written by hand or by another program)");
        }
        return value;
    }

    private <T> T decodeWithWriter(Message message, Class<T> type) {
        String writer = message.codec().orElse(null);
        if (writer == null || writer.equals(own.id())) {
            return own.decode(message.payload(), type);
        }
        PayloadCodec codec = others.get(writer);
        if (codec == null) {
            throw new PayloadDecodeException("$: the message was written by payload codec '" + writer
                    + "', which this worker does not have (codecs found: " + String.join(", ", available())
                    + "); add the module that provides '" + writer + "' to the worker");
        }
        return codec.decode(message.payload(), type);
    }

    private List<String> available() {
        return Stream.concat(Stream.of(own.id()), others.keySet().stream())
                .distinct().sorted().toList();
    }
}
