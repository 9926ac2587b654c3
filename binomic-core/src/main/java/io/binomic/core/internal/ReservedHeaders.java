package io.binomic.core.internal;

import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskLimits;
import io.binomic.api.TraceContext;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.UniqueClaim;
import java.util.HashMap;
import java.util.Map;

/**
 * The submit's side of the envelope's reserved header names ({@link Message#RESERVED}): a caller's
 * header of one of them is refused, saying which setting does its work, since the envelope field
 * it would be read as is set by submit (or by a broker) alone.
 */
public final class ReservedHeaders {
    private ReservedHeaders() { }

    /**
     * Refuses a reserved name among {@code options}' headers, but the priority (refused by
     * {@link #priorityOf}, after the payload is checked) and the trace headers (a trace context).
     */
    public static void refuse(SubmitOptions options) {
        Map<String, String> headers = options.headers();
        for (String reserved : new String[] {UniqueClaim.HEADER, UniqueClaim.DEBOUNCE_HEADER}) {
            if (headers.containsKey(reserved)) {
                throw new IllegalArgumentException("header '" + reserved + "' is reserved: submit sets it for unique and debounced jobs"
                        + " (SubmitOptions.unique, SubmitOptions.debounce); remove it from the headers");
            }
        }
        if (headers.containsKey(Message.CODEC)) {
            throw new IllegalArgumentException("header '" + Message.CODEC + "' is reserved: submit records the payload codec"
                    + " that wrote the message there (BinomicConfig.payloadCodec); remove it from the headers");
        }
        if (headers.containsKey(Message.TRACK)) {
            throw new IllegalArgumentException("header '" + Message.TRACK + "' is reserved: it is set for tasks whose status is kept"
                    + " (Task.Builder.keepStatusFor); remove it from the headers");
        }
        if (headers.containsKey(TaskLimits.KEY_HEADER)) {
            throw new IllegalArgumentException("header '" + TaskLimits.KEY_HEADER + "' is reserved: submit sets it from the task's"
                    + " limit key (Task.Builder.limitKey); remove it from the headers");
        }
        for (String reserved : new String[] {FlowLimit.RATE_ADMITTED_HEADER, FlowLimit.TURN_HEADER, Message.REPLAYED_FROM}) {
            if (headers.containsKey(reserved)) {
                throw new IllegalArgumentException("header '" + reserved + "' is reserved: the broker sets it as the job waits for"
                        + " its limits or is replayed; remove it from the headers");
            }
        }
    }

    /**
     * The priority of a job of {@code task} submitted with {@code options}: the submit's, else the task's.
     *
     * @throws IllegalArgumentException when the caller's headers carry the reserved {@link Message#PRIORITY}
     */
    public static int priorityOf(Task<?, ?> task, SubmitOptions options) {
        if (options.headers().containsKey(Message.PRIORITY)) {
            throw new IllegalArgumentException("header '" + Message.PRIORITY + "' is reserved: it carries the job's priority;"
                    + " remove it from the headers and use SubmitOptions.builder().priority(n) or Task.Builder.priority(n)");
        }
        return options.priority().orElse(task.priority());
    }

    /** The caller's headers without the trace headers, which become the message's trace context. */
    public static Map<String, String> userHeaders(Map<String, String> headers) {
        if (!headers.containsKey(TraceContext.TRACEPARENT) && !headers.containsKey(TraceContext.TRACESTATE)) {
            return headers;
        }
        Map<String, String> user = new HashMap<>(headers);
        user.remove(TraceContext.TRACEPARENT);
        user.remove(TraceContext.TRACESTATE);
        return user;
    }
}
