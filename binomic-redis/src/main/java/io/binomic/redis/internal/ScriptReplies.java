package io.binomic.redis.internal;

import io.binomic.api.spi.Delivery;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.redisson.api.stream.StreamMessageId;

/**
 * The broker's side of its scripts' arguments and replies: fields flattened into arguments,
 * entries and numbers read back from the raw values Redis returns, stream entry ids parsed.
 */
final class ScriptReplies {
    private ScriptReplies() { }

    /** Adds {@code fields} to a script's arguments: name, value, name, value... */
    static void addFields(List<Object> args, Map<String, String> fields) {
        fields.forEach((name, value) -> {
            args.add(name);
            args.add(value);
        });
    }

    /** The delivery of an entry read with {@link EntryCodec}, handed out {@code deliveryCount} times. */
    @SuppressWarnings("unchecked")
    static Delivery fetched(String queue, String receipt, Map<String, ?> fields, int deliveryCount) {
        return StreamFields.toDeliveryFromBytes(queue, receipt, (Map<String, byte[]>) fields, deliveryCount);
    }

    /** {@link #entries} of a script's entries headed by id and delivery count. */
    static List<Delivery> deliveries(String queue, List<Object> flat, int i) {
        return entries(flat, i, (id, count, fields) -> fetched(queue, id, fields, Math.max(1, Integer.parseInt(count))));
    }

    /** The delivery of an entry of a script's reply, from the two values heading it and its fields. */
    interface EntryReader {
        Delivery read(String first, String second, Map<String, Object> fields);
    }

    /**
     * Decodes entries flattened by a script read with {@link RedisContext#evalEntries} as two head values (such
     * as id and delivery count), number of field strings, fields..., from {@code i}: decoded from bytes
     * as a fetch decodes them, so a re-delivered entry is taken or refused exactly as its first delivery was.
     */
    static List<Delivery> entries(List<Object> flat, int i, EntryReader reader) {
        List<Delivery> deliveries = new ArrayList<>();
        while (i < flat.size()) {
            int n = Integer.parseInt(replyText(flat.get(i + 2)));
            Map<String, Object> fields = new LinkedHashMap<>();
            for (int j = 0; j < n; j += 2) {
                fields.put(replyFieldName(flat.get(i + 3 + j)), flat.get(i + 4 + j));
            }
            deliveries.add(reader.read(replyText(flat.get(i)), replyText(flat.get(i + 1)), fields));
            i += 3 + n;
        }
        return deliveries;
    }

    /** A string of a reply of {@link RedisContext#evalEntries}. */
    static String replyText(Object string) {
        return string instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : String.valueOf(string);
    }

    /** A field name in a reply of {@link RedisContext#evalEntries}: one of {@link StreamFields}' constants when it is one. */
    static String replyFieldName(Object string) {
        return string instanceof byte[] bytes ? EntryCodec.fieldName(bytes) : String.valueOf(string);
    }

    static long toLong(Object value) {
        return value instanceof Number n ? n.longValue() : Long.parseLong(String.valueOf(value));
    }

    static StreamMessageId parseId(String id) {
        StreamMessageId parsed = parseIdOrNull(id);
        if (parsed == null) {
            throw new IllegalArgumentException("not a stream entry id (<ms>-<seq>): '" + id + "'");
        }
        return parsed;
    }

    static StreamMessageId parseIdOrNull(String id) {
        int dash = id.indexOf('-');
        try {
            return dash < 0 ? new StreamMessageId(Long.parseLong(id))
                    : new StreamMessageId(Long.parseLong(id.substring(0, dash)), Long.parseLong(id.substring(dash + 1)));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
