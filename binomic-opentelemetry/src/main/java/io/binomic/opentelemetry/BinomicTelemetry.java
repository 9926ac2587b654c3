package io.binomic.opentelemetry;

import static io.binomic.opentelemetry.MessagingAttributes.ATTEMPT;
import static io.binomic.opentelemetry.MessagingAttributes.BATCH_MESSAGE_COUNT;
import static io.binomic.opentelemetry.MessagingAttributes.DESTINATION_NAME;
import static io.binomic.opentelemetry.MessagingAttributes.MAX_ATTEMPTS;
import static io.binomic.opentelemetry.MessagingAttributes.MESSAGE_ID;
import static io.binomic.opentelemetry.MessagingAttributes.MESSAGING_SYSTEM;
import static io.binomic.opentelemetry.MessagingAttributes.OPERATION;
import static io.binomic.opentelemetry.MessagingAttributes.OPERATION_NAME;
import static io.binomic.opentelemetry.MessagingAttributes.OPERATION_TYPE;
import static io.binomic.opentelemetry.MessagingAttributes.OUTCOME;
import static io.binomic.opentelemetry.MessagingAttributes.REPLAYED_FROM;
import static io.binomic.opentelemetry.MessagingAttributes.SYSTEM;
import static io.binomic.opentelemetry.MessagingAttributes.TASK;

import io.binomic.api.spi.Message;
import io.binomic.api.TaskContext;
import io.binomic.api.TraceContext;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.TraceContextProvider;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.opentelemetry.context.propagation.TextMapGetter;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Binomic's OpenTelemetry spans. A submit starts a {@link SpanKind#PRODUCER} span
 * {@code publish <queue>} (child of the submitting thread's span) whose context the job's
 * messages carry as their {@code traceparent}; each run of a handler, in any worker JVM and on
 * every attempt, is a {@link SpanKind#CONSUMER} span {@code process <queue>} that is the child
 * of that producer span and links to it. The run's span is current while the handler runs, so
 * the handler's own spans, and the jobs it submits, join the trace.
 *
 * <p>Attributes ({@link MessagingAttributes}): {@code messaging.system} = {@code binomic},
 * {@code messaging.destination.name} = the queue, {@code messaging.operation} ({@code publish}
 * or {@code process}), {@code messaging.message.id}, and Binomic's {@code binomic.task},
 * {@code binomic.attempt}, {@code binomic.max_attempts}, {@code binomic.outcome} and, on a
 * replayed job, {@code binomic.replayed_from}. A run that fails or times out records the
 * exception and has status {@link StatusCode#ERROR}.
 *
 * <p>On the module path (or class path) it is found by {@code Binomic.builder()} and uses
 * {@link GlobalOpenTelemetry}; or give one built on your {@link OpenTelemetry} to both hooks:
 * {@snippet :
 * BinomicTelemetry telemetry = BinomicTelemetry.create(openTelemetry);
 * Binomic binomic = Binomic.builder().traceContextProvider(telemetry).runObserver(telemetry).build();
 * }
 *
 * <p>The producer span ends when the messages are built, before the broker call (its operation
 * type is {@code create}); a submit that names its own {@code traceparent} gets no producer
 * span, and its runs are children of the span it named.
 */
public final class BinomicTelemetry implements TraceContextProvider, RunObserver {
    /** The instrumentation scope name of the spans. */
    public static final String INSTRUMENTATION_NAME = "io.binomic";

    private static final TextMapGetter<Map<String, String>> HEADERS = new TextMapGetter<>() {
        // Abstract up to opentelemetry-api 1.55 (the version Spring Boot 4.0 manages), deprecated with a default since:
        // implemented, the module links against both.
        @Override
        @SuppressWarnings("deprecation")
        public Iterable<String> keys(Map<String, String> carrier) {
            return carrier == null ? List.of() : carrier.keySet();
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    private final Supplier<Tracer> tracer;
    private final boolean parentRuns;

    /**
     * The instance {@link java.util.ServiceLoader} makes: spans of {@link GlobalOpenTelemetry},
     * read when each span starts, so an SDK registered after Binomic was built is still used.
     */
    public BinomicTelemetry() {
        this(() -> GlobalOpenTelemetry.getTracer(INSTRUMENTATION_NAME), true);
    }

    private BinomicTelemetry(Supplier<Tracer> tracer, boolean parentRuns) {
        this.tracer = tracer;
        this.parentRuns = parentRuns;
    }

    /**
     * Spans of {@code openTelemetry}, each run's span the child of its submit's span (and linked to it).
     *
     * @param openTelemetry the OpenTelemetry whose tracer starts the spans
     * @return the telemetry, to give to {@code traceContextProvider} and {@code runObserver}
     */
    public static BinomicTelemetry create(OpenTelemetry openTelemetry) {
        Tracer tracer = Objects.requireNonNull(openTelemetry, "openTelemetry must not be null").getTracer(INSTRUMENTATION_NAME);
        return new BinomicTelemetry(() -> tracer, true);
    }

    /**
     * Spans of {@code openTelemetry}, each run's span the root of a trace of its own that links to
     * its submit's span: the messaging conventions' choice for consumers whose runs should not
     * lengthen the submitter's trace.
     *
     * @param openTelemetry the OpenTelemetry whose tracer starts the spans
     * @return the telemetry, to give to {@code traceContextProvider} and {@code runObserver}
     */
    public static BinomicTelemetry createLinkedOnly(OpenTelemetry openTelemetry) {
        Tracer tracer = Objects.requireNonNull(openTelemetry, "openTelemetry must not be null").getTracer(INSTRUMENTATION_NAME);
        return new BinomicTelemetry(() -> tracer, false);
    }

    /** The current span's context, as W3C headers; empty outside a valid span. */
    @Override
    public Optional<TraceContext> current() {
        return contextOf(Context.current());
    }

    /** Starts and ends the submit's producer span, child of the current span; its context is what the jobs carry. */
    @Override
    public Optional<TraceContext> forSubmit(Submit submit) {
        SpanBuilder builder = tracer.get().spanBuilder("publish " + submit.queue())
                .setSpanKind(SpanKind.PRODUCER)
                .setParent(Context.current())
                .setAttribute(MESSAGING_SYSTEM, SYSTEM)
                .setAttribute(DESTINATION_NAME, submit.queue())
                .setAttribute(OPERATION, "publish")
                .setAttribute(OPERATION_TYPE, "create")
                .setAttribute(OPERATION_NAME, "publish")
                .setAttribute(TASK, submit.task());
        submit.messageId().ifPresent(id -> builder.setAttribute(MESSAGE_ID, id.toString()));
        if (submit.jobs() > 1) {
            builder.setAttribute(BATCH_MESSAGE_COUNT, (long) submit.jobs());
        }
        Span span = builder.startSpan();
        try {
            return contextOf(Context.current().with(span));
        } finally {
            span.end();
        }
    }

    /** Starts the run's consumer span, child of (and linked to) the span its message's traceparent names. */
    @Override
    public Run started(TaskContext job) {
        Context carried = W3CTraceContextPropagator.getInstance().extract(Context.root(), job.headers(), HEADERS);
        SpanContext producer = Span.fromContext(carried).getSpanContext();
        SpanBuilder builder = tracer.get().spanBuilder("process " + job.queue())
                .setSpanKind(SpanKind.CONSUMER)
                .setAttribute(MESSAGING_SYSTEM, SYSTEM)
                .setAttribute(DESTINATION_NAME, job.queue())
                .setAttribute(OPERATION, "process")
                .setAttribute(OPERATION_TYPE, "process")
                .setAttribute(OPERATION_NAME, "process")
                .setAttribute(MESSAGE_ID, job.messageId().toString())
                .setAttribute(TASK, job.task())
                .setAttribute(ATTEMPT, (long) job.attempt())
                .setAttribute(MAX_ATTEMPTS, (long) job.maxAttempts());
        String replayedFrom = job.headers().get(Message.REPLAYED_FROM);
        if (replayedFrom != null) {
            builder.setAttribute(REPLAYED_FROM, replayedFrom);
        }
        if (producer.isValid()) {
            builder.addLink(producer);
            if (parentRuns) {
                builder.setParent(carried);
            } else {
                builder.setNoParent();
            }
        } else {
            builder.setNoParent(); // never the worker thread's own context: a run is not part of the fetch loop's work
        }
        return new SpanRun(builder.startSpan());
    }

    private static Optional<TraceContext> contextOf(Context context) {
        Map<String, String> carrier = new HashMap<>();
        W3CTraceContextPropagator.getInstance().inject(context, carrier, Map::put);
        String parent = carrier.get(TraceContext.TRACEPARENT);
        return parent == null ? Optional.empty() : Optional.of(TraceContext.of(parent, carrier.getOrDefault(TraceContext.TRACESTATE, "")));
    }

    /** One run's span: current on the handler's thread, ended with the run's outcome. */
    private record SpanRun(Span span) implements Run {
        @Override
        public Runnable enter() {
            Scope scope = span.makeCurrent();
            return scope::close;
        }

        @Override
        public void ended(RunOutcome outcome, Optional<Throwable> failure) {
            span.setAttribute(OUTCOME, outcome.name().toLowerCase(Locale.ROOT));
            if (outcome == RunOutcome.RETRYING || outcome == RunOutcome.DEAD_LETTERED) {
                failure.ifPresent(span::recordException);
                span.setStatus(StatusCode.ERROR, failure.map(f -> f.getClass().getName() + ": " + f.getMessage()).orElse(outcome.name()));
            }
            span.end();
        }
    }
}
