package io.binomic.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** A {@link BenchWorker} JVM (or a {@link BenchBaseline} one) for one measurement, started with the suite's JVM options and Flight Recorder setting. */
final class WorkerProcess extends BenchProcess {
    private WorkerProcess(List<String> command, String logPrefix) throws IOException {
        super("the worker process", command, logPrefix);
    }

    /**
     * A {@link BenchBaseline} JVM of {@code mode}, started as the worker JVMs are; a drain waits
     * for {@link #go()} once ready (warmed, unless the mode ends in {@code -fresh}).
     */
    static WorkerProcess startBaseline(BenchContext bench, String stream, int expected, String mode, int warmup, int run)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-preview", "-Xmx1g"));
        if (bench.jfr != null) {
            Files.createDirectories(bench.jfr);
            command.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
                    + bench.jfr.resolve("baseline-" + mode + "-" + run + ".jfr"));
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), BenchBaseline.class.getName(),
                bench.redis.url(), stream, Integer.toString(expected), mode, Integer.toString(warmup)));
        WorkerProcess worker = new WorkerProcess(command, "binomic-bench-baseline-");
        worker.awaitLine("ready", 120);
        return worker;
    }

    void go() throws IOException {
        send("go");
    }

    static WorkerProcess start(BenchContext bench, String queue, String mode, int concurrency, int expected, int warmup, boolean warm,
                               int run) throws IOException, InterruptedException {
        return start(bench, queue, mode, concurrency, expected, warmup, warm, run, List.of());
    }

    static WorkerProcess start(BenchContext bench, String queue, String mode, int concurrency, int expected, int warmup, boolean warm,
                               int run, List<String> jvmOptions) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-preview", "-Xmx1g"));
        command.addAll(jvmOptions);
        if (bench.jfr != null) {
            Files.createDirectories(bench.jfr);
            command.add("-XX:StartFlightRecording=settings=profile,dumponexit=true,filename="
                    + bench.jfr.resolve("worker-" + mode + (warm ? "-warm-" : "-") + queue + "-" + run + ".jfr"));
        }
        // e.g. -XX:AOTCacheOutput=FILE to train an AOT cache on a worker, -XX:AOTCache=FILE to use it, to measure what the cache saves at start
        boolean aot = false;
        for (String option : System.getProperty("bench.workerJvmOptions", "").split(" ")) {
            if (!option.isBlank()) {
                command.add(option);
                aot |= option.startsWith("-XX:AOT");
            }
        }
        command.addAll(List.of("-cp", aot ? jarsOnly(System.getProperty("java.class.path")) : System.getProperty("java.class.path"),
                BenchWorker.class.getName(),
                bench.redis.url(), queue, mode, Integer.toString(concurrency), Integer.toString(expected), Integer.toString(warmup),
                warm ? "warm" : "cold"));
        WorkerProcess worker = new WorkerProcess(command, "binomic-bench-worker-" + mode + "-");
        worker.awaitLine("ready", 120);
        return worker;
    }

    /**
     * The class path with each {@code target/classes} directory replaced by its module's jar: the JVM refuses to write
     * (or use) an AOT cache for a class path with a non-empty directory ("Cannot have non-empty directory in paths").
     */
    private static String jarsOnly(String classPath) throws IOException {
        List<String> entries = new ArrayList<>();
        for (String entry : classPath.split(java.io.File.pathSeparator)) {
            Path path = Path.of(entry);
            if (Files.isDirectory(path) && path.endsWith(Path.of("target", "classes"))) {
                try (var jars = Files.list(path.getParent())) {
                    entry = jars.filter(j -> j.toString().endsWith(".jar") && !j.toString().endsWith("-tests.jar")
                            && !j.toString().endsWith("-sources.jar")).findFirst()
                            .orElseThrow(() -> new IllegalStateException("no jar next to " + path)).toString();
                }
            }
            entries.add(entry);
        }
        return String.join(java.io.File.pathSeparator, entries);
    }
}
