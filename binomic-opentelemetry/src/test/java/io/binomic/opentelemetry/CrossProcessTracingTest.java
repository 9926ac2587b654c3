package io.binomic.opentelemetry;

import io.binomic.testsupport.RedisProcess;
import static io.binomic.opentelemetry.MessagingAttributes.ATTEMPT;
import static io.binomic.opentelemetry.MessagingAttributes.DESTINATION_NAME;
import static io.binomic.opentelemetry.MessagingAttributes.MESSAGE_ID;
import static io.binomic.opentelemetry.MessagingAttributes.MESSAGING_SYSTEM;
import static io.binomic.opentelemetry.MessagingAttributes.OPERATION;
import static io.binomic.opentelemetry.MessagingAttributes.OUTCOME;
import static io.binomic.opentelemetry.MessagingAttributes.REPLAYED_FROM;
import static io.binomic.opentelemetry.MessagingAttributes.TASK;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.JobFailedException;
import io.binomic.api.JobHandle;
import io.binomic.core.Binomic;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Submits in this JVM, runs in a worker JVM against a real redis-server: each run's consumer span
 * (written by the worker to a file) is the child of, and links to, the submit's producer span
 * (kept by this JVM's in-memory exporter), on a retry and on a replay from the dead-letter queue too.
 */
class CrossProcessTracingTest {

    @Test
    void runSpansInAnotherJvmAreChildrenOfAndLinkedToTheSubmitSpans(@TempDir Path dir) throws Exception {
        InMemorySpanExporter exported = InMemorySpanExporter.create();
        SdkTracerProvider tracing = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported)).build();
        OpenTelemetrySdk sdk = OpenTelemetrySdk.builder().setTracerProvider(tracing).build();
        BinomicTelemetry telemetry = BinomicTelemetry.create(sdk);
        Path spansFile = dir.resolve("worker-spans.txt");
        try (RedisProcess redis = RedisProcess.start()) {
            Process worker = startWorker(redis.url(), spansFile, dir.resolve("worker.log"));
            Binomic client = Binomic.builder().traceContextProvider(telemetry).runObserver(telemetry)
                    .config(BinomicConfig.builder().brokerUrl(redis.url()).build())
                    .task(TracedTasks.FLAKY).task(TracedTasks.DOOMED)
                    .build().start();
            try {
                Span request = sdk.getTracer("test").spanBuilder("request").startSpan();
                JobHandle<String> flaky;
                JobHandle<String> doomed;
                Scope scope = request.makeCurrent();
                try {
                    flaky = client.submit(TracedTasks.FLAKY, "ada");
                    doomed = client.submit(TracedTasks.DOOMED, "grace");
                } finally {
                    scope.close();
                    request.end();
                }
                assertEquals("ADA", flaky.await(Duration.ofSeconds(60)));
                assertThrows(JobFailedException.class, () -> doomed.await(Duration.ofSeconds(60)));
                assertEquals(1, client.deadLetters().replay(TracedTasks.QUEUE, DeadLetterFilter.all()));

                List<SpanLines> runs = awaitSpans(spansFile, 4, worker, dir.resolve("worker.log"));
                SpanData flakySubmit = producerOf(exported.getFinishedSpanItems(), flaky);
                SpanData doomedSubmit = producerOf(exported.getFinishedSpanItems(), doomed);
                for (SpanData submit : List.of(flakySubmit, doomedSubmit)) {
                    assertEquals(request.getSpanContext().getTraceId(), submit.getTraceId());
                    assertEquals(request.getSpanContext().getSpanId(), submit.getParentSpanId());
                    assertEquals("publish " + TracedTasks.QUEUE, submit.getName());
                    assertEquals("binomic", submit.getAttributes().get(MESSAGING_SYSTEM));
                    assertEquals(TracedTasks.QUEUE, submit.getAttributes().get(DESTINATION_NAME));
                    assertEquals("publish", submit.getAttributes().get(OPERATION));
                }

                List<SpanLines> flakyRuns = runsOf(runs, "flaky");
                assertEquals(2, flakyRuns.size(), "two attempts of flaky: " + runs);
                assertRun(flakyRuns.get(0), flakySubmit, "1", "retrying");
                assertRun(flakyRuns.get(1), flakySubmit, "2", "succeeded");
                assertEquals(flaky.id().toString(), flakyRuns.get(0).attribute(MESSAGE_ID));
                assertEquals(flaky.id().toString(), flakyRuns.get(1).attribute(MESSAGE_ID));

                List<SpanLines> doomedRuns = runsOf(runs, "doomed");
                assertEquals(2, doomedRuns.size(), "doomed and its replay: " + runs);
                assertRun(doomedRuns.get(0), doomedSubmit, "1", "dead_lettered");
                assertEquals(doomed.id().toString(), doomedRuns.get(0).attribute(MESSAGE_ID));
                assertNull(doomedRuns.get(0).attribute(REPLAYED_FROM));
                assertRun(doomedRuns.get(1), doomedSubmit, "1", "succeeded");
                assertNotNull(doomedRuns.get(1).attribute(REPLAYED_FROM), "the replay's run says what it replays");
            } finally {
                client.close();
                worker.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static void assertRun(SpanLines run, SpanData submit, String attempt, String outcome) {
        assertEquals(SpanKind.CONSUMER.name(), run.kind());
        assertEquals("process " + TracedTasks.QUEUE, run.name());
        assertEquals(submit.getTraceId(), run.traceId(), "the run is in the submit's trace");
        assertEquals(submit.getSpanId(), run.parentSpanId(), "the run is the child of the submit's span");
        assertEquals(List.of(submit.getTraceId() + "/" + submit.getSpanId()), run.links(), "the run links to the submit's span");
        assertEquals("binomic", run.attribute(MESSAGING_SYSTEM));
        assertEquals(TracedTasks.QUEUE, run.attribute(DESTINATION_NAME));
        assertEquals("process", run.attribute(OPERATION));
        assertEquals(attempt, run.attribute(ATTEMPT));
        assertEquals(outcome, run.attribute(OUTCOME));
    }

    private static SpanData producerOf(List<SpanData> spans, JobHandle<?> job) {
        return spans.stream().filter(s -> s.getKind() == SpanKind.PRODUCER)
                .filter(s -> job.id().toString().equals(s.getAttributes().get(MESSAGE_ID)))
                .findFirst().orElseThrow(() -> new AssertionError("no producer span for job " + job.id() + " among " + spans));
    }

    /** The runs of one task in the order they ended. */
    private static List<SpanLines> runsOf(List<SpanLines> runs, String task) {
        return runs.stream().filter(r -> task.equals(r.attribute(TASK))).toList();
    }

    private static Process startWorker(String redisUrl, Path spans, Path log) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "--enable-preview", "-cp", System.getProperty("java.class.path"),
                TracingWorkerMain.class.getName(), redisUrl, spans.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static List<SpanLines> awaitSpans(Path file, int count, Process worker, Path log) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        List<SpanLines> spans = new ArrayList<>();
        while (System.nanoTime() < deadline) {
            spans.clear();
            if (Files.exists(file)) {
                for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                    spans.add(SpanLines.read(line));
                }
            }
            if (spans.size() >= count) {
                return spans;
            }
            assertTrue(worker.isAlive(), () -> "the worker JVM exited: " + readQuietly(log));
            Thread.sleep(100);
        }
        throw new AssertionError("the worker exported " + spans.size() + " of " + count + " spans: " + spans + "\n" + readQuietly(log));
    }

    private static String readQuietly(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }
}
