package io.binomic.api.spi;

import io.binomic.api.TraceContext;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Gives a submit the trace context of the submitting thread, so an application that traces
 * (OpenTelemetry, Brave...) need not pass one to every {@code submit}. Found with
 * {@link ServiceLoader} by {@code Binomic.builder()} (declare it with
 * {@code provides io.binomic.api.spi.TraceContextProvider with ...} and in
 * {@code META-INF/services}), or given with {@code Binomic.Builder.traceContextProvider}. Asked
 * on the submitting thread, once per submit (once per {@code submitAll}), only when the submit
 * names no {@code traceparent} itself.
 */
@FunctionalInterface
public interface TraceContextProvider {

    /** The current thread's trace context; empty when it is not inside a span. Must be cheap and must not block. */
    Optional<TraceContext> current();
}
