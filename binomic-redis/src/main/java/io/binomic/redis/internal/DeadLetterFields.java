package io.binomic.redis.internal;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.redisson.api.stream.StreamMessageId;

/**
 * Maps a dead letter to the fields of a DLQ stream entry and back. A well-formed message keeps
 * its stream fields as they were (so replay can put them back); a broken entry keeps its raw
 * fields as one JSON object in {@code raw}, so no field of it can clash with the failure fields
 * {@code reason, errorClass, errorMessage, stackHead, attempts, failedAt}.
 */
final class DeadLetterFields {
    static final String RAW = "raw";
    static final String REASON = "reason";
    static final String ERROR_CLASS = "errorClass";
    static final String ERROR_MESSAGE = "errorMessage";
    static final String STACK_HEAD = "stackHead";
    static final String ATTEMPTS = "attempts";
    static final String FAILED_AT = "failedAt";

    private static final Set<String> FAILURE_FIELDS = Set.of(RAW, REASON, ERROR_CLASS, ERROR_MESSAGE, STACK_HEAD, ATTEMPTS, FAILED_AT);

    private DeadLetterFields() { }

    static Map<String, String> encode(Delivery delivery, DeadLetter.Failure failure) {
        Map<String, String> fields = new LinkedHashMap<>();
        delivery.message().ifPresentOrElse(
                m -> fields.putAll(StreamFields.encode(m)),
                () -> fields.put(RAW, StreamFields.toJson(delivery.rawFields())));
        fields.put(REASON, failure.reason().name());
        fields.put(ERROR_CLASS, failure.errorClass());
        fields.put(ERROR_MESSAGE, failure.errorMessage());
        fields.put(STACK_HEAD, failure.stackHead());
        fields.put(ATTEMPTS, Integer.toString(failure.attempts()));
        fields.put(FAILED_AT, Long.toString(failure.failedAt().toEpochMilli()));
        return fields;
    }

    /** Never throws: a DLQ entry that does not parse is still listed (and can be deleted). */
    static DeadLetter decode(String queue, StreamMessageId id, Map<String, String> fields) {
        Map<String, String> raw;
        Optional<Message> message;
        if (fields.containsKey(RAW)) {
            raw = parsedOr(fields.get(RAW), StreamFields::fromJson, Map.of(RAW, fields.get(RAW)));
            message = Optional.empty();
        } else {
            raw = new LinkedHashMap<>(fields);
            raw.keySet().removeAll(FAILURE_FIELDS);
            message = parsedOr(raw, r -> Optional.of(StreamFields.decode(r)), Optional.empty());
        }
        String task = message.map(Message::task).orElse(raw.getOrDefault(StreamFields.TASK, "?"));
        DeadLetter.Failure failure = new DeadLetter.Failure(
                // an unreadable reason: the entry itself is damaged
                parsedOr(fields.get(REASON), DeadLetterReason::valueOf, DeadLetterReason.DECODE_ERROR),
                fields.getOrDefault(ERROR_CLASS, ""),
                fields.getOrDefault(ERROR_MESSAGE, ""),
                fields.getOrDefault(STACK_HEAD, ""),
                parsedOr(fields.get(ATTEMPTS), Integer::parseInt, 0),
                Instant.ofEpochMilli(parsedOr(fields.get(FAILED_AT), Long::parseLong, id.getId0())));
        return new DeadLetter(id.toString(), queue, task.isEmpty() ? "?" : task, failure, message, raw);
    }

    /** What {@code parse} makes of {@code input}, or {@code fallback} when it fails: a damaged entry is still listed. */
    private static <I, T> T parsedOr(I input, Function<I, T> parse, T fallback) {
        try {
            return parse.apply(input);
        } catch (RuntimeException e) {
            return fallback;
        }
    }
}
