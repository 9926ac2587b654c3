package io.binomic.core.internal.worker;

import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.TextCodec;
import io.binomic.core.Worker;
import java.time.Duration;

/**
 * Runs in a child JVM started without {@code --enable-preview} (see {@link TaskInvokerTest}): an
 * embedded worker runs one task that returns and one that overruns its timeout, and prints what
 * happened. Exit 0 when both behaved as in a JVM with preview features.
 */
public final class NoPreviewWorkerMain {
    private NoPreviewWorkerMain() { }

    public static void main(String[] args) throws Exception {
        Task<String, Void> quick = Task.builder("quick", String.class).build();
        Task<String, Void> slow = Task.builder("slow", String.class).timeout(Duration.ofMillis(200)).maxAttempts(1).build();
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().pollTimeout(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(1)).build())
                .build();
        try (Binomic binomic = Binomic.builder().config(config).handle(quick, s -> null).handle(slow, s -> {
            Thread.sleep(Duration.ofSeconds(30));
            return null;
        }).codec(new TextCodec()).build().start()) {
            Worker worker = binomic.startWorker();
            binomic.submit(quick, "a");
            binomic.submit(slow, "b");
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while ((worker.counters().succeeded() < 1 || binomic.queueStats("default").deadLetters() < 1)
                    && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            String error = binomic.deadLetters().queues().isEmpty() ? "none"
                    : binomic.deadLetters().list("default", DeadLetterFilter.all(), 1).getFirst().failure().errorClass();
            System.out.println("invoker=" + TaskInvokers.forWorkers().name() + " succeeded=" + worker.counters().succeeded()
                    + " failed=" + worker.counters().failed() + " deadLetterError=" + error);
            worker.stop(Duration.ofSeconds(1));
        }
    }
}
