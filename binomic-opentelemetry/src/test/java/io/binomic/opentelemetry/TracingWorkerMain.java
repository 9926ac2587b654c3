package io.binomic.opentelemetry;

import io.binomic.api.BinomicConfig;
import io.binomic.core.Binomic;
import io.opentelemetry.api.GlobalOpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;

/**
 * The worker JVM of {@link CrossProcessTracingTest}: registers an OpenTelemetry SDK as the global
 * one, whose spans it appends to a file, and runs a worker on Redis. It uses the module the way
 * an application does by putting it on the class path: {@code Binomic.builder()} finds
 * {@link BinomicTelemetry} with ServiceLoader. Arguments: the Redis URL and the spans file.
 */
public final class TracingWorkerMain {
    private TracingWorkerMain() { }

    public static void main(String[] args) throws InterruptedException {
        Path spans = Path.of(args[1]);
        SdkTracerProvider tracing = SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(new FileExporter(spans))).build();
        GlobalOpenTelemetry.set(OpenTelemetrySdk.builder().setTracerProvider(tracing).build());
        Binomic binomic = TracedTasks.handlers(Binomic.builder())
                .config(BinomicConfig.builder().brokerUrl(args[0]).build())
                .build().start();
        binomic.startWorker();
        System.out.println("worker running");
        Thread.sleep(Long.MAX_VALUE); // the test destroys this process once it has read the spans
    }

    /** Appends each ended span as a line; the test reads the file while this JVM runs. */
    private record FileExporter(Path file) implements SpanExporter {
        @Override
        public synchronized CompletableResultCode export(Collection<SpanData> ended) {
            StringBuilder lines = new StringBuilder();
            for (SpanData span : ended) {
                lines.append(SpanLines.write(span)).append('\n');
            }
            try {
                Files.writeString(file, lines, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode flush() {
            return CompletableResultCode.ofSuccess();
        }

        @Override
        public CompletableResultCode shutdown() {
            return CompletableResultCode.ofSuccess();
        }
    }
}
