package io.binomic.redis.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.binomic.api.Priority;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToLongFunction;
import java.util.regex.Pattern;

/**
 * Maps a {@link Message} to the fields of a stream entry and back: the envelope's typed fields
 * travel as the reserved headers {@link Message#wireHeaders()} writes and {@link Message#fromWire}
 * reads, so entries keep the form every version wrote. The fields are plain strings
 * so that {@code redis-cli} and other tools can read them:
 * {@code id, task, queue, attempt, enqueuedAt} (epoch ms), {@code payload} (the codec's JSON as
 * UTF-8 text; {@code payload64}, base64, when the bytes are not valid UTF-8) and {@code headers}
 * (a JSON object of strings, absent when it would be just {@code {"codec":"json-jdk"}}: the payload codec that
 * wrote the message, see {@link Message#CODEC}).
 */
final class StreamFields {
    static final String ID = "id";
    static final String TASK = "task";
    static final String QUEUE = "queue";
    static final String ATTEMPT = "attempt";
    static final String ENQUEUED_AT = "enqueuedAt";
    static final String PAYLOAD = "payload";
    static final String PAYLOAD_BASE64 = "payload64";
    static final String HEADERS = "headers";
    /**
     * The message's priority when it is not the default (the {@link Message#PRIORITY} header, kept out
     * of {@code headers} so the scripts that move a message back onto its queue read it without JSON).
     */
    static final String PRIORITY = "priority";

    private static final ObjectMapper JSON = JsonMapper.builder().build();
    /** Most messages carry no header: their field is this constant, written and read without Jackson. */
    private static final String NO_HEADERS = "{}";
    /**
     * Nearly every message carries just the codec header: its field, {@code {"codec":"json-jdk"}},
     * is also written and read without Jackson (in the same form Jackson writes).
     */
    private static final String CODEC_ONLY_PREFIX = "{\"" + Message.CODEC + "\":\"";
    private static final String CODEC_ONLY_SUFFIX = "\"}";
    private static final Pattern PLAIN_CODEC_ID = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    /**
     * What nearly every message carries: written as no {@code headers} field at all (about 30 bytes
     * less per queued message, and per entry a fetch reads), and read back from its absence.
     */
    static final Map<String, String> DEFAULT_CODEC_ONLY = Map.of(Message.CODEC, "json-jdk");
    private static final TypeReference<Map<String, String>> STRING_MAP = new TypeReference<>() { };

    private StreamFields() { }

    /** The entry fields of {@code message}, in a stable order ({@code enqueue_unique.lua} writes the common one itself). */
    static Map<String, String> encode(Message message) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put(ID, message.id().toString());
        fields.put(TASK, message.task());
        fields.put(QUEUE, message.queue());
        fields.put(ATTEMPT, Integer.toString(message.attempt()));
        fields.put(ENQUEUED_AT, Long.toString(message.enqueuedAt().toEpochMilli()));
        String text = utf8OrNull(message.payload());
        if (text != null) {
            fields.put(PAYLOAD, text);
        } else {
            fields.put(PAYLOAD_BASE64, Base64.getEncoder().encodeToString(message.payload()));
        }
        Map<String, String> headers = message.wireHeaders();
        if (headers.containsKey(Message.PRIORITY)) {
            headers = new HashMap<>(headers);
            headers.remove(Message.PRIORITY);
            int priority = message.priority();
            if (priority != Priority.DEFAULT) {
                fields.put(PRIORITY, Integer.toString(priority));
            }
        }
        if (!DEFAULT_CODEC_ONLY.equals(headers)) {
            fields.put(HEADERS, headersJson(headers));
        }
        return fields;
    }

    private static final byte[] ID_BYTES = ID.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TASK_BYTES = TASK.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] QUEUE_BYTES = QUEUE.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ATTEMPT_BYTES = ATTEMPT.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] ENQUEUED_AT_BYTES = ENQUEUED_AT.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PAYLOAD_BYTES = PAYLOAD.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEADERS_BYTES = HEADERS.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] NO_HEADERS_BYTES = NO_HEADERS.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

    /**
     * {@link #encode} as the UTF-8 bytes an XADD sends, built without the string map: the names are
     * constants, the id is formatted straight into bytes, and a payload that is valid UTF-8 is sent
     * as the array it is (encoding it to a String and back cost a copy and a decode per message, the
     * larger part of a bulk enqueue's client CPU). Same fields, same order, same bytes as
     * {@code encode} followed by UTF-8 (a property test holds them equal).
     */
    static Map<byte[], byte[]> encodeBytes(Message message) {
        byte[] payload = message.payload();
        if (!isAscii(payload) && utf8OrNull(payload) == null) {
            return utf8(encode(message)); // payload64, rare: the string path says how
        }
        Map<String, String> headers = message.wireHeaders();
        if (!headers.isEmpty() && !DEFAULT_CODEC_ONLY.equals(headers)) {
            return utf8(encode(message)); // priority or other headers: the string path, one place for their rules
        }
        Map<byte[], byte[]> fields = new LinkedHashMap<>(16);
        fields.put(ID_BYTES, uuidBytes(message.id()));
        fields.put(TASK_BYTES, message.task().getBytes(StandardCharsets.UTF_8));
        fields.put(QUEUE_BYTES, message.queue().getBytes(StandardCharsets.UTF_8));
        fields.put(ATTEMPT_BYTES, Integer.toString(message.attempt()).getBytes(StandardCharsets.US_ASCII));
        fields.put(ENQUEUED_AT_BYTES, Long.toString(message.enqueuedAt().toEpochMilli()).getBytes(StandardCharsets.US_ASCII));
        fields.put(PAYLOAD_BYTES, payload);
        if (headers.isEmpty()) {
            fields.put(HEADERS_BYTES, NO_HEADERS_BYTES);
        }
        return fields;
    }

    /** The fields as UTF-8 bytes, names and values. */
    static Map<byte[], byte[]> utf8(Map<String, String> fields) {
        Map<byte[], byte[]> bytes = new LinkedHashMap<>();
        fields.forEach((name, value) -> bytes.put(name.getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8)));
        return bytes;
    }

    /** {@link UUID#toString()} as ASCII bytes. */
    private static byte[] uuidBytes(UUID id) {
        byte[] out = new byte[36];
        long msb = id.getMostSignificantBits();
        long lsb = id.getLeastSignificantBits();
        int at = 0;
        for (int i = 0; i < 32; i++) {
            if (i == 8 || i == 12 || i == 16 || i == 20) {
                out[at++] = '-';
            }
            long word = i < 16 ? msb : lsb;
            int shift = (15 - (i & 15)) * 4;
            out[at++] = HEX[(int) (word >>> shift) & 0xf];
        }
        return out;
    }

    /** {@code fields} as one JSON object: the member of a message in the delayed set. */
    static String toJson(Map<String, String> fields) {
        try {
            return JSON.writeValueAsString(fields);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a map of strings as JSON", e); // cannot happen
        }
    }

    /** Parses a JSON object of strings; throws IllegalArgumentException when it is not one. */
    static Map<String, String> fromJson(String json) {
        try {
            Map<String, String> map = JSON.readValue(json, STRING_MAP);
            if (map == null) {
                throw new IllegalArgumentException("null instead of a JSON object");
            }
            return map;
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not a JSON object of strings: " + e.getOriginalMessage(), e);
        }
    }

    /**
     * Decodes a stream entry into a delivery. A broken entry (a field missing or unreadable)
     * becomes a {@linkplain Delivery#malformed malformed} delivery holding the raw fields: the
     * worker dead-letters it, and fetching goes on.
     */
    static Delivery toDelivery(String queue, String entryId, Map<String, String> fields, int deliveryCount) {
        try {
            return Delivery.of(queue, entryId, decode(fields), deliveryCount);
        } catch (RuntimeException e) {
            return Delivery.malformed(queue, entryId, fields, deliveryCount, "stream entry " + entryId + " of queue '"
                    + queue + "' is not a Binomic message: " + e.getMessage());
        }
    }

    /**
     * {@link #toDelivery} for fields read as bytes ({@link EntryCodec}): the payload is used as it is,
     * the numbers and the id are parsed from their ASCII bytes. A broken entry fails with the same
     * message as from strings, and its raw fields are the strings a string read would have held.
     */
    static Delivery toDeliveryFromBytes(String queue, String entryId, Map<String, byte[]> fields, int deliveryCount) {
        try {
            return Delivery.of(queue, entryId, decodeBytes(fields, queue), deliveryCount);
        } catch (RuntimeException e) {
            return Delivery.malformed(queue, entryId, strings(fields), deliveryCount, "stream entry " + entryId + " of queue '"
                    + queue + "' is not a Binomic message: " + e.getMessage());
        }
    }

    /**
     * {@link #decode} from bytes. Where the bytes are not in the form Binomic writes (an id not in
     * canonical form, a number with a sign or out of the fast range), the field goes through the
     * string parser, so what is accepted and each error message stay those of {@link #decode}.
     * {@code streamQueue}, the queue the entry was read from, is reused for the {@code queue} field
     * when they are equal.
     */
    static Message decodeBytes(Map<String, byte[]> fields, String streamQueue) {
        UUID id = uuid(fields);
        String task = text(requireBytes(fields, TASK));
        byte[] queueBytes = requireBytes(fields, QUEUE);
        String queue = sameText(queueBytes, streamQueue) ? streamQueue : text(queueBytes);
        int attempt = (int) number(fields, ATTEMPT, 9, Integer::parseInt);
        if (attempt < 1) {
            throw new IllegalArgumentException("field 'attempt' must be >= 1, was " + attempt);
        }
        Instant enqueuedAt = Instant.ofEpochMilli(number(fields, ENQUEUED_AT, 18, s -> Instant.ofEpochMilli(Long.parseLong(s)).toEpochMilli()));
        byte[] payload = fields.containsKey(PAYLOAD) ? fields.get(PAYLOAD)
                : base64Payload(fields.containsKey(PAYLOAD_BASE64), () -> text(requireBytes(fields, PAYLOAD_BASE64)));
        byte[] headerBytes = fields.get(HEADERS);
        byte[] priorityBytes = fields.get(PRIORITY);
        return Message.fromWire(id, task, queue, attempt, enqueuedAt, payload, withPriority(
                headers(headerBytes == null ? null : text(headerBytes)), priorityBytes == null ? null : text(priorityBytes)));
    }

    /** The payload of an entry without {@code payload}: its {@code payload64}, when {@code present}. */
    private static byte[] base64Payload(boolean present, Supplier<String> field) {
        if (!present) {
            throw new IllegalArgumentException("field '" + PAYLOAD + "' is missing (and so is '" + PAYLOAD_BASE64 + "', its base64 form)");
        }
        return parse(PAYLOAD_BASE64, field.get(), Base64.getDecoder()::decode);
    }

    /** The headers of a {@code headers} field; {@code null} (no field) is the default codec's alone. */
    private static Map<String, String> headers(String field) {
        return field == null ? DEFAULT_CODEC_ONLY
                : field.equals(NO_HEADERS) ? Map.of()
                : codecOnly(field) != null ? Map.of(Message.CODEC, codecOnly(field))
                : parse(HEADERS, require(HEADERS, field), StreamFields::fromJson);
    }

    /** The fields as a string read would have returned them (malformed UTF-8 replaced, as Redisson's StringCodec does). */
    static Map<String, String> strings(Map<String, byte[]> fields) {
        Map<String, String> strings = new LinkedHashMap<>();
        fields.forEach((name, value) -> strings.put(name, value == null ? null : text(value)));
        return strings;
    }

    private static String text(byte[] bytes) { return new String(bytes, StandardCharsets.UTF_8); }

    private static boolean sameText(byte[] bytes, String ascii) {
        if (bytes.length != ascii.length()) {
            return false;
        }
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] != ascii.charAt(i)) { // equal only when both are ASCII: UTF-8's other bytes are negative, other chars above 0x7f
                return false;
            }
        }
        return true;
    }

    private static byte[] requireBytes(Map<String, byte[]> fields, String name) {
        byte[] value = fields.get(name);
        if (value == null || value.length == 0) {
            throw new IllegalArgumentException("field '" + name + "' is missing");
        }
        return value;
    }

    /**
     * A field of at most {@code maxDigits} ASCII digits, parsed in place; anything else (a sign,
     * more digits, not a digit) goes to {@code parser} as a string, for its result or its error.
     */
    private static long number(Map<String, byte[]> fields, String name, int maxDigits,
                               ToLongFunction<String> parser) {
        byte[] value = requireBytes(fields, name);
        if (value.length <= maxDigits) {
            long n = 0;
            boolean digits = true;
            for (byte b : value) {
                if (b < '0' || b > '9') {
                    digits = false;
                    break;
                }
                n = n * 10 + (b - '0');
            }
            if (digits) {
                return n;
            }
        }
        return parse(name, text(value), parser::applyAsLong);
    }

    /** The id field: a canonical UUID (as Binomic writes it) parsed in place, any other form by {@link UUID#fromString}. */
    private static UUID uuid(Map<String, byte[]> fields) {
        byte[] value = requireBytes(fields, ID);
        if (value.length == 36 && value[8] == '-' && value[13] == '-' && value[18] == '-' && value[23] == '-') {
            long a = hex(value, 0, 8);
            long b = hex(value, 9, 13);
            long c = hex(value, 14, 18);
            long d = hex(value, 19, 23);
            long e = hex(value, 24, 36);
            if ((a | b | c | d | e) >= 0) {
                return new UUID(a << 32 | b << 16 | c, d << 48 | e);
            }
        }
        return parse(ID, text(value), UUID::fromString);
    }

    /** The hex digits {@code from} to {@code to} (at most 12) as a number, or -1 if one is not a hex digit. */
    private static long hex(byte[] bytes, int from, int to) {
        long n = 0;
        for (int i = from; i < to; i++) {
            if (!HexFormat.isHexDigit(bytes[i])) {
                return -1;
            }
            n = n << 4 | HexFormat.fromHexDigit(bytes[i]);
        }
        return n;
    }

    /** Decodes stored fields; throws IllegalArgumentException naming the first bad field. */
    static Message decode(Map<String, String> fields) {
        UUID id = parse(fields, ID, UUID::fromString);
        String task = require(fields, TASK);
        String queue = require(fields, QUEUE);
        int attempt = parse(fields, ATTEMPT, Integer::parseInt);
        if (attempt < 1) {
            throw new IllegalArgumentException("field 'attempt' must be >= 1, was " + attempt);
        }
        Instant enqueuedAt = parse(fields, ENQUEUED_AT, s -> Instant.ofEpochMilli(Long.parseLong(s)));
        byte[] payload = fields.containsKey(PAYLOAD) ? fields.get(PAYLOAD).getBytes(StandardCharsets.UTF_8)
                : base64Payload(fields.containsKey(PAYLOAD_BASE64), () -> require(fields, PAYLOAD_BASE64));
        return Message.fromWire(id, task, queue, attempt, enqueuedAt, payload,
                withPriority(headers(fields.get(HEADERS)), fields.get(PRIORITY)));
    }

    /**
     * {@code headers} with the {@code priority} field's value, when it is not the default. A value
     * that is not a priority fails the entry (dead-lettered with its raw fields): run at the default
     * instead, a replay of its dead letter would lose the priority it was meant to have.
     */
    private static Map<String, String> withPriority(Map<String, String> headers, String priority) {
        if (priority == null) {
            return headers;
        }
        if (priority.length() != 1 || priority.charAt(0) < '0' || priority.charAt(0) > '9') {
            throw new IllegalArgumentException("field '" + PRIORITY + "' has a bad value '" + abbreviate(priority)
                    + "': a priority is one digit, from 0 (lowest) to 9 (highest)");
        }
        if (Priority.parse(priority) == Priority.DEFAULT) {
            return headers;
        }
        Map<String, String> with = new HashMap<>(headers);
        with.put(Message.PRIORITY, priority);
        return with;
    }

    private static String headersJson(Map<String, String> headers) {
        if (headers.isEmpty()) {
            return NO_HEADERS;
        }
        String codec = headers.get(Message.CODEC);
        if (headers.size() == 1 && codec != null && PLAIN_CODEC_ID.matcher(codec).matches()) {
            return CODEC_ONLY_PREFIX + codec + CODEC_ONLY_SUFFIX;
        }
        return toJson(headers);
    }

    /** The codec id of a headers field holding only a plain codec header, else null. */
    private static String codecOnly(String headerField) {
        if (!headerField.startsWith(CODEC_ONLY_PREFIX) || !headerField.endsWith(CODEC_ONLY_SUFFIX)) {
            return null;
        }
        String codec = headerField.substring(CODEC_ONLY_PREFIX.length(), headerField.length() - CODEC_ONLY_SUFFIX.length());
        return PLAIN_CODEC_ID.matcher(codec).matches() ? codec : null;
    }

    private static String require(Map<String, String> fields, String name) { return require(name, fields.get(name)); }

    private static String require(String name, String value) {
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("field '" + name + "' is missing");
        }
        return value;
    }

    private static <T> T parse(Map<String, String> fields, String name, Function<String, T> parser) {
        return parse(name, require(fields, name), parser);
    }

    private static <T> T parse(String name, String value, Function<String, T> parser) {
        try {
            return parser.apply(value);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("field '" + name + "' has a bad value '" + abbreviate(value) + "': " + e.getMessage(), e);
        }
    }

    private static boolean isAscii(byte[] bytes) {
        for (byte b : bytes) {
            if (b < 0) {
                return false;
            }
        }
        return true;
    }

    private static String abbreviate(String value) {
        return value.length() <= 80 ? value : value.substring(0, 80) + "...";
    }

    private static String utf8OrNull(byte[] bytes) {
        // JSON payloads are nearly always ASCII, which is valid UTF-8 as it is: skip the decoder.
        if (isAscii(bytes)) {
            return new String(bytes, StandardCharsets.US_ASCII);
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
