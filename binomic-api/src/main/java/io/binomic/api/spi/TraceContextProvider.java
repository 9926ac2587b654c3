package io.binomic.api.spi;

import io.binomic.api.TraceContext;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.UUID;

/**
 * Gives a submit the trace context of the submitting thread, so an application that traces
 * (OpenTelemetry, Brave...) need not pass one to every {@code submit}. Found with
 * {@link ServiceLoader} by {@code Binomic.builder()} (declare it with
 * {@code provides io.binomic.api.spi.TraceContextProvider with ...} and in
 * {@code META-INF/services}), or given with {@code Binomic.Builder.traceContextProvider}. Asked
 * on the submitting thread, once per submit (once per {@code submitAll}), only when the submit
 * names no {@code traceparent} itself, through {@link #forSubmit(Submit)}.
 */
@FunctionalInterface
public interface TraceContextProvider {

    /** The current thread's trace context; empty when it is not inside a span. Must be cheap and must not block. */
    Optional<TraceContext> current();

    /**
     * The trace context for one submit call: what the core asks, so that a provider that starts
     * a producer span can name the queue, the task and the message. Asked on the submitting
     * thread before the jobs are sent; the default is {@link #current()}.
     *
     * @param submit the task, queue and job count of the call
     * @return the context the submitted messages carry; empty for none
     */
    default Optional<TraceContext> forSubmit(Submit submit) { return current(); }

    /**
     * What one submit call sends.
     *
     * @param task the task's name
     * @param queue the logical queue the jobs go to
     * @param jobs how many jobs the call submits (more than one for {@code submitAll})
     * @param messageId the message's id when the call submits one job; empty for a batch
     */
    record Submit(String task, String queue, int jobs, Optional<UUID> messageId) {
        public Submit {
            if (task == null || queue == null || messageId == null) {
                throw new NullPointerException("task, queue and messageId are required (messageId may be empty)");
            }
            if (jobs < 1) {
                throw new IllegalArgumentException("a submit sends at least one job, got " + jobs);
            }
        }
    }
}
