package io.binomic.bench;

import static io.binomic.bench.BenchContext.awaitEmpty;
import static io.binomic.bench.BenchContext.submitOnly;

import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * A worker's memory per task: {@code bench.sleepers} tasks asleep at once in one worker JVM, its heap
 * and resident memory at the plateau, under the default heap or under each of several.
 */
final class BenchFootprint {
    private final BenchContext bench;

    BenchFootprint(BenchContext bench) {
        this.bench = bench;
    }

    void footprint(int run, Map<String, Double> r) throws Exception {
        footprint(run, r, "footprint_", List.of());
    }

    void footprint(int run, Map<String, Double> r, String prefix, List<String> jvmOptions) throws Exception {
        bench.redis.flushAll();
        String queue = bench.nextQueue();
        Task<Long, Void> task = submitOnly(queue);
        try (Binomic client = bench.client(task)) {
            client.submitAll(task, Collections.nCopies(bench.sleepers, 0L));
            try (WorkerProcess worker = WorkerProcess.start(bench, queue, "footprint", bench.sleepers, bench.sleepers, 0, false, run, jvmOptions)) {
                long started = System.nanoTime();
                long cpu0 = worker.cpuNanos();
                String[] bytes = worker.awaitLine("footprint", 120 + Integer.getInteger("bench.sleepSeconds", 5)).split(" ");
                r.put("footprint_tasks", (double) bench.sleepers);
                r.put(prefix + "peak_heap_mib", Long.parseLong(bytes[1]) / 1048576.0);
                r.put(prefix + "live_heap_mib", Long.parseLong(bytes[2]) / 1048576.0);
                r.put(prefix + "rss_mib", Long.parseLong(bytes[3]) / 1048576.0);
                r.put(prefix + "peak_rss_mib", Long.parseLong(bytes[4]) / 1048576.0);
                if (bytes.length > 5) {
                    r.put(prefix + "peak_heap_at_gc_mib", Long.parseLong(bytes[5]) / 1048576.0);
                    r.put(prefix + "live_heap_before_mib", Long.parseLong(bytes[6]) / 1048576.0);
                    r.put(prefix + "sleeping_when_measured", Double.parseDouble(bytes[7]));
                    r.put(prefix + "start_spread_s", Long.parseLong(bytes[8]) / 1e6);
                    r.put(prefix + "gc_pauses", Double.parseDouble(bytes[9]));
                    r.put(prefix + "gc_pause_s", Long.parseLong(bytes[10]) / 1e3);
                    // What each sleeping task keeps alive: the live heap over the worker's own before any task.
                    r.put(prefix + "live_bytes_per_sleeping_task",
                            (Long.parseLong(bytes[2]) - Long.parseLong(bytes[6])) / Math.max(1.0, Double.parseDouble(bytes[7])));
                }
                awaitEmpty(client, queue, 120 + Integer.getInteger("bench.sleepSeconds", 5));
                double seconds = (System.nanoTime() - started) / 1e9;
                r.put(prefix + "tasks_per_s", bench.sleepers / seconds);
                r.put(prefix + "worker_cpu_s", (worker.cpuNanos() - cpu0) / 1e9);
            }
        }
    }

    /**
     * The footprint target alone ({@code -Dbench.only=footprint}): {@code bench.sleepers} tasks
     * sleeping 5 s in one worker, once per maximum heap of {@code bench.footprintHeaps} (default
     * 1g, 512m, 384m, 256m; the order reversed every other run), each with {@code bench.footprintGcOptions}
     * (default none: G1). A worker that runs out of heap exits ({@code -XX:+ExitOnOutOfMemoryError}) and
     * counts as {@code <prefix>failed}. {@code -Dbench.sleepSeconds} makes the tasks sleep longer than 5 s. With {@code -Dbench.histogram=DIR} each worker writes its class
     * histogram at the plateau to {@code DIR/histogram-<heap>-<run>.txt}.
     */
    void footprintHeaps(int run, Map<String, Double> r) throws Exception {
        List<String> heaps = new ArrayList<>(Arrays.stream(System.getProperty("bench.footprintHeaps", "1g,512m,384m,256m").split(","))
                .map(String::strip).toList());
        if (run % 2 == 0) {
            Collections.reverse(heaps);
        }
        List<String> gcOptions = Arrays.stream(System.getProperty("bench.footprintGcOptions", "").split(" ")).filter(o -> !o.isBlank()).toList();
        String histograms = System.getProperty("bench.histogram", "");
        for (String heap : heaps) {
            String prefix = "fp_" + heap + "_";
            List<String> options = new ArrayList<>(List.of("-Xmx" + heap, "-XX:+ExitOnOutOfMemoryError",
                    "-Dbench.sleepSeconds=" + Integer.getInteger("bench.sleepSeconds", 5)));
            options.addAll(gcOptions);
            if (!histograms.isBlank()) {
                Files.createDirectories(Path.of(histograms));
                options.add("-Dbench.histogram=" + Path.of(histograms).toAbsolutePath().resolve("histogram-" + heap + "-" + run + ".txt"));
            }
            try {
                footprint(run, r, prefix, options);
                r.put(prefix + "failed", 0.0);
            } catch (IllegalStateException e) {
                System.err.println(prefix + "failed: " + e.getMessage());
                r.put(prefix + "failed", 1.0);
            }
        }
    }
}
