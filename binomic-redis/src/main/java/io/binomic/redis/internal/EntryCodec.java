package io.binomic.redis.internal;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.redisson.client.codec.BaseCodec;
import org.redisson.client.codec.ByteArrayCodec;
import org.redisson.client.codec.StringCodec;
import org.redisson.client.protocol.Decoder;
import org.redisson.client.protocol.Encoder;

/**
 * Reads stream entries for {@link StreamFields#toDeliveryFromBytes}:
 * field names as the constants of {@link StreamFields} (compared in the reply buffer, no String built),
 * field values as the bytes Redis sent. Redisson decodes an XREADGROUP reply on its single Netty
 * thread; with {@code StringCodec} that thread UTF-8-decoded every value into a String, which the
 * worker then encoded back into bytes (the payload) or parsed as ASCII digits. Also the codec of
 * a script that returns entries ({@link RedisContext#evalEntries}): its strings come back as bytes.
 */
final class EntryCodec extends BaseCodec {
    static final EntryCodec INSTANCE = new EntryCodec();

    private static final String[] NAMES = {
        StreamFields.ID, StreamFields.TASK, StreamFields.QUEUE, StreamFields.ATTEMPT, StreamFields.ENQUEUED_AT,
        StreamFields.PAYLOAD, StreamFields.PAYLOAD_BASE64, StreamFields.HEADERS, StreamFields.PRIORITY,
    };
    private static final byte[][] NAME_BYTES = new byte[NAMES.length][];

    static {
        for (int i = 0; i < NAMES.length; i++) {
            NAME_BYTES[i] = NAMES[i].getBytes(StandardCharsets.US_ASCII);
        }
    }

    private final Decoder<Object> fieldName = (buf, state) -> {
        String name = knownName(buf);
        if (name == null) {
            name = buf.toString(StandardCharsets.UTF_8); // another tool's field: kept for the raw fields
        }
        buf.readerIndex(buf.writerIndex());
        return name;
    };

    private EntryCodec() { }

    /** The constant equal to the readable bytes of {@code buf}, or null. */
    private static String knownName(ByteBuf buf) {
        int length = buf.readableBytes();
        int start = buf.readerIndex();
        for (int i = 0; i < NAME_BYTES.length; i++) {
            byte[] name = NAME_BYTES[i];
            if (name.length == length && sameBytes(buf, start, name)) {
                return NAMES[i];
            }
        }
        return null;
    }

    private static boolean sameBytes(ByteBuf buf, int start, byte[] name) {
        for (int j = 0; j < name.length; j++) {
            if (buf.getByte(start + j) != name[j]) {
                return false;
            }
        }
        return true;
    }

    /** The field name of {@code bytes}: a constant of {@link StreamFields} when it is one. */
    static String fieldName(byte[] bytes) {
        for (int i = 0; i < NAME_BYTES.length; i++) {
            if (Arrays.equals(NAME_BYTES[i], bytes)) {
                return NAMES[i];
            }
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    @Override
    public Decoder<Object> getMapKeyDecoder() { return fieldName; }

    @Override
    public Encoder getMapKeyEncoder() { return StringCodec.INSTANCE.getValueEncoder(); }

    @Override
    public Decoder<Object> getValueDecoder() { return ByteArrayCodec.INSTANCE.getValueDecoder(); }

    /** Only reads use this codec; the arguments of a script that returns entries are strings. */
    @Override
    public Encoder getValueEncoder() { return StringCodec.INSTANCE.getValueEncoder(); }
}
