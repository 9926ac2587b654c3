package io.binomic.core.internal;

import io.binomic.api.Message;
import io.binomic.api.Priority;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import java.util.HashMap;
import java.util.Map;

/** How a submit's priority becomes the {@link Message#PRIORITY} header (absent for the default, which costs nothing). */
public final class PriorityHeaders {
    private PriorityHeaders() { }

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

    /** The headers of a message of {@code task} with a priority other than the default. */
    public static Map<String, String> with(Map<String, String> headers, String codecId, Task<?, ?> task, int priority) {
        Map<String, String> all = new HashMap<>(headers);
        all.put(Message.CODEC, codecId);
        if (task.isTracked()) {
            all.put(Message.TRACK, Long.toString(task.statusRetention().toMillis()));
        }
        all.put(Message.PRIORITY, Integer.toString(Priority.require("priority", priority)));
        return all;
    }

    /** {@code headers} with {@code priority} (none for the default). */
    public static Map<String, String> withPriority(Map<String, String> headers, int priority) {
        if (Priority.require("priority", priority) == Priority.DEFAULT) {
            return headers;
        }
        Map<String, String> all = new HashMap<>(headers);
        all.put(Message.PRIORITY, Integer.toString(priority));
        return all;
    }
}
