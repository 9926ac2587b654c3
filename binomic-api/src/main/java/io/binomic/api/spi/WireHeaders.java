package io.binomic.api.spi;

import io.binomic.api.TaskLimits;
import io.binomic.api.TraceContext;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Reads the headers a broker stored with a message ({@link Message#fromWire}): each reserved one
 * into its envelope field when its value parses, the others, and a reserved one that does not
 * parse, as ordinary headers, so {@link Message#wireHeaders()} writes them back as they came.
 */
final class WireHeaders {
    private WireHeaders() { }

    static void read(Map<String, String> wire, Message.Builder b) {
        for (Map.Entry<String, String> header : wire.entrySet()) {
            String name = header.getKey();
            if (name.equals(TraceContext.TRACEPARENT) || name.equals(TraceContext.TRACESTATE)) {
                continue;
            }
            if (!Message.RESERVED.contains(name) || !readReserved(name, header.getValue(), b)) {
                b.rawHeader(name, header.getValue());
            }
        }
        Optional<TraceContext> trace = TraceContext.fromHeaders(wire);
        if (trace.isPresent()) {
            b.traceContext(trace.get());
        } else {
            // a malformed traceparent (another producer's) is forwarded unchanged, as the W3C asks
            for (String name : List.of(TraceContext.TRACEPARENT, TraceContext.TRACESTATE)) {
                if (wire.containsKey(name)) {
                    b.rawHeader(name, wire.get(name));
                }
            }
        }
    }

    /** Moves a reserved header into its field; false when the value does not parse. */
    private static boolean readReserved(String name, String value, Message.Builder b) {
        switch (name) {
            case Message.CODEC -> b.codec(value);
            case Message.TRACK -> {
                long millis = number(value);
                if (millis <= 0) {
                    return false;
                }
                b.trackFor(Duration.ofMillis(millis));
            }
            case Message.PRIORITY -> {
                if (value.length() != 1 || value.charAt(0) < '0' || value.charAt(0) > '9') {
                    return false;
                }
                b.priority(value.charAt(0) - '0');
            }
            case Message.REPLAYED_FROM -> b.replayedFrom(value);
            case Message.BATCH, Message.BATCH_CALLBACK, Message.WORKFLOW -> {
                UUID id;
                try {
                    id = UUID.fromString(value);
                } catch (IllegalArgumentException notAnId) {
                    return false;
                }
                switch (name) {
                    case Message.BATCH -> b.batch(id);
                    case Message.BATCH_CALLBACK -> b.batchCallback(id);
                    default -> b.workflow(id);
                }
            }
            case UniqueClaim.HEADER -> {
                Optional<UniqueClaim> claim = UniqueClaim.parse(value);
                claim.ifPresent(b::unique);
                return claim.isPresent();
            }
            case UniqueClaim.DEBOUNCE_HEADER -> b.debounceKey(value);
            case TaskLimits.KEY_HEADER -> b.limitKey(value);
            case FlowLimit.RATE_ADMITTED_HEADER, FlowLimit.TURN_HEADER -> {
                int attempt = attempt(value);
                if (attempt <= 0) {
                    return false;
                }
                if (name.equals(FlowLimit.TURN_HEADER)) {
                    b.turnAttempt(attempt);
                } else {
                    b.rateAdmittedAttempt(attempt);
                }
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    /** An attempt as the wire carries it; -1 when it is not one. */
    private static int attempt(String value) {
        long n = number(value);
        return n > Integer.MAX_VALUE ? -1 : (int) n;
    }

    /** A decimal attempt or retention as the wire carries it; -1 when it is not one. */
    private static long number(String value) {
        if (value == null || value.isEmpty() || value.length() > 18) {
            return -1;
        }
        for (int i = 0; i < value.length(); i++) {
            if (value.charAt(i) < '0' || value.charAt(i) > '9') {
                return -1;
            }
        }
        return Long.parseLong(value);
    }
}
