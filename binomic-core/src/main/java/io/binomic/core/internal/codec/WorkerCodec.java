package io.binomic.core.internal.codec;

import io.binomic.api.Message;
import io.binomic.api.PayloadDecodeException;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.PayloadCodec;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;

/**
 * The codec a worker decodes with: the codec that wrote each message (its {@link Message#CODEC}
 * header), or the instance's own codec for a message without that header.
 *
 * <p>The worker's state machine decodes {@code message.payload()} alone, without the message's
 * headers. So the broker the worker reads through is {@linkplain #tracking wrapped}: for every
 * message written by another codec it notes which one, keyed by the identity of the payload
 * array (arrays compare by identity, and the weak map drops an entry once its message is gone),
 * and {@link #decode} looks it up. Messages of this instance's own codec, the usual case, add
 * nothing to the map.
 */
public final class WorkerCodec implements PayloadCodec {
    private final PayloadCodec own;
    private final Map<String, PayloadCodec> others;
    private final Map<byte[], String> writers = Collections.synchronizedMap(new WeakHashMap<>());

    /**
     * @param own the instance's codec, used to encode and to decode messages without a codec header
     * @param found every codec available by id, to decode what other codecs wrote
     */
    public WorkerCodec(PayloadCodec own, Map<String, PayloadCodec> found) {
        this.own = Objects.requireNonNull(own, "own");
        this.others = Map.copyOf(found);
    }

    @Override
    public String id() {
        return own.id();
    }

    @Override
    public byte[] encode(Object value) {
        return own.encode(value);
    }

    @Override
    public <T> T decode(byte[] bytes, Class<T> type) {
        String writer = bytes == null ? null : writers.get(bytes);
        if (writer == null) {
            return own.decode(bytes, type);
        }
        PayloadCodec codec = others.get(writer);
        if (codec == null) {
            throw new PayloadDecodeException("$: the message was written by payload codec '" + writer
                    + "', which this worker does not have (codecs found: " + String.join(", ", available())
                    + "); add the module that provides '" + writer + "' to the worker");
        }
        return codec.decode(bytes, type);
    }

    private List<String> available() {
        return java.util.stream.Stream.concat(java.util.stream.Stream.of(own.id()), others.keySet().stream())
                .distinct().sorted().toList();
    }

    /** {@code broker} noting the writer of each fetched or reclaimed message for {@link #decode}. */
    public Broker tracking(Broker broker) {
        return new WriterTrackingBroker(broker, this);
    }

    /** Notes the codec that wrote the payloads of {@code deliveries} when it is not this instance's. */
    List<Delivery> noteWriters(List<Delivery> deliveries) {
        for (Delivery delivery : deliveries) {
            delivery.message().ifPresent(message -> {
                String writer = message.headers().get(Message.CODEC);
                if (writer != null && !writer.equals(own.id())) {
                    writers.put(message.payload(), writer);
                }
            });
        }
        return deliveries;
    }
}
