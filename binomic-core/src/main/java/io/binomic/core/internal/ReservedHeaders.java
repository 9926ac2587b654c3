package io.binomic.core.internal;

import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskLimits;
import io.binomic.api.TraceContext;
import io.binomic.api.spi.FlowLimit;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.UniqueClaim;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The submit's side of the envelope's reserved header names ({@link Message#RESERVED}): a caller's
 * header of one of them is refused, saying which setting does its work, since the envelope field
 * it would be read as is set by submit (or by a broker) alone.
 */
public final class ReservedHeaders {
    /** Why each reserved name is refused, in the order they are checked; the priority and trace headers are not here. */
    private static final Map<String, String> REFUSED = refused();

    private ReservedHeaders() { }

    private static Map<String, String> refused() {
        String flow = "submit sets it for unique and debounced jobs (SubmitOptions.unique, SubmitOptions.debounce)";
        String broker = "the broker sets it as the job waits for its limits or is replayed";
        Map<String, String> why = new LinkedHashMap<>();
        why.put(UniqueClaim.HEADER, flow);
        why.put(UniqueClaim.DEBOUNCE_HEADER, flow);
        why.put(Message.CODEC, "submit records the payload codec that wrote the message there (BinomicConfig.payloadCodec)");
        why.put(Message.TRACK, "it is set for tasks whose status is kept (Task.Builder.keepStatusFor)");
        why.put(TaskLimits.KEY_HEADER, "submit sets it from the task's limit key (Task.Builder.limitKey)");
        why.put(FlowLimit.RATE_ADMITTED_HEADER, broker);
        why.put(FlowLimit.TURN_HEADER, broker);
        why.put(Message.REPLAYED_FROM, broker);
        why.put(Message.BATCH, "Binomic.batch() sets it for the jobs of a batch");
        why.put(Message.BATCH_CALLBACK, "Binomic.batch() sets it for a batch's callbacks");
        why.put(Message.WORKFLOW, "Binomic.submit(Workflow) sets it for the jobs of a workflow");
        return Collections.unmodifiableMap(why);
    }

    /**
     * Refuses a reserved name among {@code options}' headers, but the priority (refused by
     * {@link #priorityOf}, after the payload is checked) and the trace headers (a trace context).
     */
    public static void refuse(SubmitOptions options) {
        Map<String, String> headers = options.headers();
        if (headers.isEmpty()) {
            return; // nearly every submit: nothing to look up
        }
        for (Map.Entry<String, String> reserved : REFUSED.entrySet()) {
            if (headers.containsKey(reserved.getKey())) {
                throw new IllegalArgumentException("header '" + reserved.getKey() + "' is reserved: " + reserved.getValue()
                        + "; remove it from the headers");
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
