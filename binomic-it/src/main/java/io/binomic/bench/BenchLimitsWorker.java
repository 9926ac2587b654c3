package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.RateLimit;
import io.binomic.api.Task;
import io.binomic.api.TaskHandler;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * The worker JVM of the binding-limit measurements ({@link BenchLimitsBinding}): one Binomic worker
 * on one queue that writes a line per job to standard output (which the bench sends to a file):
 * {@code s <key> <start, epoch µs>} in {@code keyed} mode (a task with a rate limit per key), and
 * {@code h <enter> <exit>} (epoch µs) in {@code hold} mode (a task that sleeps a fixed time, under the
 * queue's concurrency limit). Epoch microseconds compare between JVMs on one machine.
 *
 * <p>Arguments: redis URL, queue, mode, concurrency, the per-key permits, the per-key period in
 * milliseconds, the hold time in milliseconds, and optionally how many other queues the worker reads
 * beside it ({@code <queue>-other<i>}, no limit, a task each that runs nothing: the bench submits none).
 */
public final class BenchLimitsWorker {
    private BenchLimitsWorker() { }

    /** A task whose jobs' argument is their tenant's number, each tenant at most {@code permits} starts per period. */
    static Task<Long, Void> keyedTask(String queue, int permits, long periodMillis) {
        return Task.builder("bench-keyed", Long.class).queue(queue).limitKey(tenant -> "t" + tenant)
                .rateLimitPerKey(RateLimit.of(permits, Duration.ofMillis(periodMillis))).build();
    }

    /** A task with no limit of its own: the queue's concurrency limit binds it. */
    static Task<Long, Void> holdTask(String queue) {
        return Task.builder("bench-hold", Long.class).queue(queue).build();
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String queue = args[1];
        String mode = args[2];
        int concurrency = Integer.parseInt(args[3]);
        int permits = Integer.parseInt(args[4]);
        long periodMillis = Long.parseLong(args[5]);
        long holdMillis = Long.parseLong(args[6]);
        int otherQueues = args.length > 7 ? Integer.parseInt(args[7]) : 0;
        String[] read = new String[1 + otherQueues];
        read[0] = queue;
        for (int i = 1; i <= otherQueues; i++) {
            read[i] = queue + "-other" + i;
        }
        // buffered, flushed every 100 ms: a flush per line would cost the handler a write system call per job
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16), false);
        Thread.ofPlatform().daemon().name("bench-flush").start(() -> {
            try {
                while (true) {
                    Thread.sleep(100);
                    out.flush();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        BinomicConfig config = BinomicConfig.builder().brokerUrl(url)
                .worker(WorkerConfig.builder().queues(read).concurrency(concurrency).build()).build();
        Binomic.Builder builder = Binomic.builder().config(config);
        for (int i = 1; i <= otherQueues; i++) {
            builder.handle(Task.builder("bench-other" + i, Long.class).queue(read[i]).build(), (TaskHandler<Long, Void>) n -> null);
        }
        if (mode.equals("keyed")) {
            TaskHandler<Long, Void> handler = tenant -> {
                out.println("s " + tenant + " " + BenchWorker.nowMicros());
                return null;
            };
            builder.handle(keyedTask(queue, permits, periodMillis), handler);
        } else if (mode.equals("hold")) {
            TaskHandler<Long, Void> handler = n -> {
                long enter = BenchWorker.nowMicros();
                Thread.sleep(holdMillis);
                out.println("h " + enter + " " + BenchWorker.nowMicros());
                return null;
            };
            builder.handle(holdTask(queue), handler);
        } else {
            throw new IllegalArgumentException("unknown mode " + mode);
        }
        try (Binomic binomic = builder.build().start()) {
            binomic.startWorker();
            out.println("ready");
            out.flush();
            // the bench ends this process once it has what it measures
            new CountDownLatch(1).await();
        }
    }
}
