package io.binomic.opentelemetry;

import static io.binomic.opentelemetry.MessagingAttributes.ATTEMPT;
import static io.binomic.opentelemetry.MessagingAttributes.BATCH_MESSAGE_COUNT;
import static io.binomic.opentelemetry.MessagingAttributes.MESSAGE_ID;
import static io.binomic.opentelemetry.MessagingAttributes.OUTCOME;
import static io.binomic.opentelemetry.MessagingAttributes.TASK;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The spans of one JVM on the embedded broker: what a handler sees, batches, failures, linked-only runs. */
class BinomicTelemetryTest {
    private final InMemorySpanExporter exported = InMemorySpanExporter.create();
    private final OpenTelemetrySdk sdk = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported)).build()).build();
    private final Tracer tracer = sdk.getTracer("test");

    private static final Task<String, String> CHILD = Task.builder("child", String.class, String.class).keepStatusFor(Duration.ofHours(1)).build();
    private static final Task<String, String> PARENT = Task.builder("parent", String.class, String.class).keepStatusFor(Duration.ofHours(1)).build();
    private static final Task<String, Void> BROKEN = Task.builder("broken", String.class).maxAttempts(1).build();
    private static final Task<Integer, Void> MANY = Task.builder("many", Integer.class).build();

    @Test
    void aHandlersSpansAndSubmitsJoinTheRunsTrace() throws Exception {
        BinomicTelemetry telemetry = BinomicTelemetry.create(sdk);
        Binomic[] self = new Binomic[1];
        try (Binomic binomic = Binomic.builder().traceContextProvider(telemetry).runObserver(telemetry)
                .handle(CHILD, s -> {
                    Span inner = tracer.spanBuilder("inner work").startSpan(); // parent: the run's span, current here
                    inner.end();
                    return s + "!";
                })
                .handle(PARENT, s -> self[0].submit(CHILD, s).await(Duration.ofSeconds(30)))
                .build().start()) {
            self[0] = binomic;
            binomic.startWorker();
            assertEquals("x!", binomic.submit(PARENT, "x").await(Duration.ofSeconds(30)));
            awaitSpans(5); // two submits, two runs, the handler's own span
        }
        List<SpanData> spans = exported.getFinishedSpanItems();
        SpanData parentSubmit = only(spans, SpanKind.PRODUCER, "parent");
        SpanData parentRun = only(spans, SpanKind.CONSUMER, "parent");
        SpanData childSubmit = only(spans, SpanKind.PRODUCER, "child");
        SpanData childRun = only(spans, SpanKind.CONSUMER, "child");
        SpanData inner = spans.stream().filter(s -> s.getName().equals("inner work")).findFirst().orElseThrow();
        assertFalse(parentSubmit.getParentSpanContext().isValid(), "a submit outside any span starts a trace");
        assertEquals(parentSubmit.getSpanId(), parentRun.getParentSpanId());
        assertEquals(parentRun.getSpanId(), childSubmit.getParentSpanId(), "a job submitted by a handler continues its run's trace");
        assertEquals(childSubmit.getSpanId(), childRun.getParentSpanId());
        assertEquals(childRun.getSpanId(), inner.getParentSpanId(), "the run's span is current while the handler runs");
        for (SpanData span : List.of(parentSubmit, parentRun, childSubmit, childRun, inner)) {
            assertEquals(parentSubmit.getTraceId(), span.getTraceId());
        }
        assertEquals("succeeded", childRun.getAttributes().get(OUTCOME));
        assertEquals(1L, childRun.getAttributes().get(ATTEMPT));
    }

    @Test
    void aFailedRunRecordsTheExceptionAndABatchSubmitCountsItsJobs() throws Exception {
        BinomicTelemetry telemetry = BinomicTelemetry.create(sdk);
        try (Binomic binomic = Binomic.builder().traceContextProvider(telemetry).runObserver(telemetry)
                .handle(BROKEN, s -> {
                    throw new IllegalArgumentException("bad " + s);
                })
                .handle(MANY, n -> null)
                .build().start()) {
            binomic.startWorker();
            binomic.submit(BROKEN, "input");
            binomic.submitAll(MANY, List.of(1, 2, 3));
            awaitSpans(6);
        }
        List<SpanData> spans = exported.getFinishedSpanItems();
        SpanData broken = only(spans, SpanKind.CONSUMER, "broken");
        assertEquals("dead_lettered", broken.getAttributes().get(OUTCOME));
        assertEquals(StatusCode.ERROR, broken.getStatus().getStatusCode());
        assertTrue(broken.getStatus().getDescription().contains("bad input"), broken.getStatus().getDescription());
        assertEquals("exception", broken.getEvents().getFirst().getName());
        SpanData batch = only(spans, SpanKind.PRODUCER, "many");
        assertEquals(3L, batch.getAttributes().get(BATCH_MESSAGE_COUNT));
        assertEquals(null, batch.getAttributes().get(MESSAGE_ID), "a batch's span names no single message");
        List<SpanData> runs = spans.stream().filter(s -> s.getKind() == SpanKind.CONSUMER && "many".equals(s.getAttributes().get(TASK))).toList();
        assertEquals(3, runs.size());
        runs.forEach(run -> assertEquals(batch.getSpanId(), run.getParentSpanId()));
    }

    @Test
    void linkedOnlyRunsStartTraceOfTheirOwn() throws Exception {
        BinomicTelemetry telemetry = BinomicTelemetry.createLinkedOnly(sdk);
        try (Binomic binomic = Binomic.builder().traceContextProvider(telemetry).runObserver(telemetry)
                .handle(CHILD, s -> s).build().start()) {
            binomic.startWorker();
            binomic.submit(CHILD, "y").await(Duration.ofSeconds(30));
            awaitSpans(2);
        }
        List<SpanData> spans = exported.getFinishedSpanItems();
        SpanData submit = only(spans, SpanKind.PRODUCER, "child");
        SpanData run = only(spans, SpanKind.CONSUMER, "child");
        assertFalse(run.getParentSpanContext().isValid());
        assertTrue(!run.getTraceId().equals(submit.getTraceId()));
        assertEquals(submit.getSpanId(), run.getLinks().getFirst().getSpanContext().getSpanId());
        assertEquals(submit.getTraceId(), run.getLinks().getFirst().getSpanContext().getTraceId());
    }

    private SpanData only(List<SpanData> spans, SpanKind kind, String task) {
        List<SpanData> found = spans.stream().filter(s -> s.getKind() == kind && task.equals(s.getAttributes().get(TASK))).toList();
        assertEquals(1, found.size(), () -> kind + " spans of " + task + ": " + spans);
        return found.getFirst();
    }

    private void awaitSpans(int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (exported.getFinishedSpanItems().size() < count && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(count, exported.getFinishedSpanItems().size(), () -> "spans: " + exported.getFinishedSpanItems());
    }
}
