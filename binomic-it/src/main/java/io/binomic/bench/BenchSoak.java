package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.core.internal.cli.BinomicCli;
import io.binomic.core.internal.process.JavaCommand;
import io.binomic.core.internal.process.MasterConfig;
import io.binomic.core.internal.process.SlotSnapshot;
import io.binomic.core.internal.process.WorkerSlots;
import io.binomic.core.internal.process.WorkerState;
import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A worker's footprint over a long run at a steady rate: a {@code binomic master} (its own JVM, started
 * as {@code binomic master} is) with {@code bench.soak.workers} worker JVMs (2) at concurrency
 * {@code bench.soak.concurrency} (50), fed no-op jobs at {@code bench.soak.rate} jobs/s (1,500) for
 * {@code bench.soak.minutes} (10). Every {@code bench.soak.sampleSeconds} (30) it reads each worker's
 * resident memory ({@code VmRSS} of {@code /proc/PID/status}) and thread count, and the jobs done
 * (the workers' counters in the master's segment); it prints the samples, the RSS slope over the
 * second half (least squares, MiB/min) and the jobs done per second. Then a drain: a backlog of
 * {@code bench.soak.drain} jobs (200,000) enqueued at once, timed from the enqueue to an empty queue,
 * the throughput at which to judge a footprint lever.
 *
 * <p>The workers run with the master's default JVM options ({@link MasterConfig#defaultWorkerJvmOptions})
 * plus {@code bench.soak.jvmOptions} (space-separated, given as the master's {@code --jvm-option}s, so they
 * replace the defaults they decide); with {@code -Dbench.soak.baseline=true}, a second run follows with
 * {@code bench.soak.baselineOptions} ({@code -XX:+UseG1GC -XX:TrimNativeHeapInterval=0}: the JVM's own
 * defaults), and before it one run for each of {@code bench.soak.variants} ({@code |}-separated sets of
 * options, each added to {@code bench.soak.jvmOptions}). {@code -Dbench.soak.nmt=true} turns on Native Memory Tracking in the workers and prints, at
 * the end, what grew since the first sample after a minute, by category.
 *
 * <pre>./mvnw -q -Pbench verify -Dbench.only=soak [-Dbench.soak.minutes=4] [-Dbench.soak.baseline=true]</pre>
 */
final class BenchSoak {
    private static final double MIB = 1024 * 1024;

    private final BenchRedis redis;
    private final int rate = Integer.getInteger("bench.soak.rate", 1500);
    private final double minutes = Double.parseDouble(property("bench.soak.minutes", "10"));
    private final int workers = Integer.getInteger("bench.soak.workers", 2);
    private final int concurrency = Integer.getInteger("bench.soak.concurrency", 50);
    private final int sampleSeconds = Integer.getInteger("bench.soak.sampleSeconds", 30);
    private final int drain = Integer.getInteger("bench.soak.drain", 200_000);
    private final boolean nmt = Boolean.getBoolean("bench.soak.nmt");
    private int runNumber;

    private BenchSoak(BenchRedis redis) {
        this.redis = redis;
    }

    /** One worker JVM at one sample. */
    private record Sample(double minute, int slot, long pid, double rssMib, int threads, long done) { }

    static void run() throws Exception {
        List<String> extra = options(property("bench.soak.jvmOptions", ""));
        try (BenchRedis redis = BenchRedis.start()) {
            BenchSoak soak = new BenchSoak(redis);
            System.out.printf(Locale.ROOT, "{\"machine\":{\"nproc\":%d,\"jdk\":\"%s\",\"redis\":\"%s\",\"load1\":%.2f}}%n",
                    Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.version"), redis.version(), load());
            List<Map<String, Double>> results = new ArrayList<>();
            List<String> names = new ArrayList<>();
            results.add(soak.soak("defaults", extra));
            names.add("defaults");
            int variant = 0;
            for (String options : property("bench.soak.variants", "").split("\\|")) {
                if (!options.isBlank()) {
                    List<String> variantOptions = new ArrayList<>(extra);
                    variantOptions.addAll(options(options));
                    names.add("variant" + ++variant);
                    results.add(soak.soak(names.getLast(), variantOptions));
                }
            }
            if (Boolean.getBoolean("bench.soak.baseline")) {
                List<String> baseline = new ArrayList<>(options(property("bench.soak.baselineOptions",
                        "-XX:+UseG1GC -XX:TrimNativeHeapInterval=0")));
                baseline.addAll(extra);
                results.add(soak.soak("baseline", baseline));
                names.add("baseline");
            }
            System.out.println();
            System.out.printf(Locale.ROOT, "soak: %d worker JVMs x concurrency %d, %,d jobs/s for %s min; drain of %,d%n",
                    soak.workers, soak.concurrency, soak.rate, soak.minutes, soak.drain);
            System.out.printf(Locale.ROOT, "%-44s", "");
            names.forEach(n -> System.out.printf(Locale.ROOT, "%14s", n));
            System.out.println();
            for (String key : results.getFirst().keySet()) {
                System.out.printf(Locale.ROOT, "%-44s", key);
                results.forEach(r -> System.out.printf(Locale.ROOT, "%14.2f", r.getOrDefault(key, Double.NaN)));
                System.out.println();
            }
            if (names.getLast().equals("baseline") && soak.drain > 0) {
                for (int i = 0; i < names.size() - 1; i++) {
                    System.out.printf(Locale.ROOT, "drain rate, %s / baseline: %.2f%n", names.get(i),
                            results.get(i).get("drain_jobs_per_s") / results.getLast().get("drain_jobs_per_s"));
                }
            }
        }
    }

    /** The system property, or {@code otherwise} when it is absent or blank (as the bench profile passes an unset one). */
    private static String property(String name, String otherwise) {
        String value = System.getProperty(name, "");
        return value.isBlank() ? otherwise : value;
    }

    private static List<String> options(String text) {
        return text.isBlank() ? List.of() : Arrays.asList(text.strip().split("\\s+"));
    }

    private static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }

    private Map<String, Double> soak(String name, List<String> jvmOptions) throws Exception {
        redis.flushAll();
        String queue = "soak-" + (++runNumber);
        Path dir = Files.createTempDirectory("binomic-bench-soak-");
        List<String> workerOptions = new ArrayList<>(jvmOptions);
        workerOptions.add("-D" + SoakTasks.QUEUE_PROPERTY + "=" + queue);
        if (nmt) {
            workerOptions.add("-XX:NativeMemoryTracking=summary");
        }
        MasterConfig effective = MasterConfig.builder().brokerUrl(redis.url()).jvmOptions(workerOptions).build();
        System.out.printf(Locale.ROOT, "%n== %s: worker JVM options %s%n", name, String.join(" ", effective.workerJvmOptions(System.getenv())));
        Map<String, Double> r = new LinkedHashMap<>();
        r.put("load1_start", load());
        Process master = startMaster(dir, queue, workerOptions);
        Task<Long, Void> task = BenchWorker.task(queue);
        List<Sample> samples = new ArrayList<>();
        try (Binomic client = Binomic.builder().config(BinomicConfig.builder().brokerUrl(redis.url()).build()).task(task).build().start()) {
            awaitRunning(master, dir);
            AtomicLong submitted = new AtomicLong();
            AtomicBoolean stop = new AtomicBoolean();
            List<Thread> producers = produce(client, task, submitted, stop);
            long start = System.nanoTime();
            long end = start + (long) (minutes * 60e9);
            boolean baselined = false;
            for (long next = start; ; next += TimeUnit.SECONDS.toNanos(sampleSeconds)) {
                for (long wait = next - System.nanoTime(); wait > 0; wait = next - System.nanoTime()) {
                    LockSupport.parkNanos(wait);
                }
                double minute = (System.nanoTime() - start) / 60e9;
                List<Sample> now = sample(dir, minute);
                samples.addAll(now);
                QueueStats stats = client.queueStats(queue);
                print(now, samples, stats, submitted.get());
                if (nmt && !baselined && minute >= 1) {
                    now.forEach(s -> jcmd(s.pid(), "VM.native_memory", "baseline"));
                    baselined = true;
                }
                if (System.nanoTime() + TimeUnit.SECONDS.toNanos(sampleSeconds) > end + TimeUnit.SECONDS.toNanos(1)) {
                    break;
                }
            }
            double soakSeconds = (System.nanoTime() - start) / 1e9;
            stop.set(true);
            for (Thread producer : producers) {
                producer.join();
            }
            r.put("submitted_per_s", submitted.get() / soakSeconds);
            List<Sample> last = sample(dir, soakSeconds / 60);
            r.put("done_per_s", last.stream().mapToLong(Sample::done).sum() / soakSeconds);
            for (int slot = 0; slot < workers; slot++) {
                int s = slot;
                List<Sample> mine = samples.stream().filter(x -> x.slot() == s).toList();
                r.put("w" + slot + "_rss_first_mib", mine.getFirst().rssMib());
                r.put("w" + slot + "_rss_end_mib", mine.getLast().rssMib());
                r.put("w" + slot + "_rss_max_mib", mine.stream().mapToDouble(Sample::rssMib).max().orElse(0));
                r.put("w" + slot + "_slope_2nd_half_mib_per_min", slope(mine.stream().filter(x -> x.minute() >= minutes / 2).toList()));
                r.put("w" + slot + "_threads_end", (double) mine.getLast().threads());
                r.put("w" + slot + "_restarts", (double) mine.stream().mapToLong(Sample::pid).distinct().count() - 1);
            }
            if (nmt) {
                for (Sample s : last) {
                    System.out.println("-- worker " + s.slot() + " (pid " + s.pid() + "): what grew since the baseline");
                    System.out.println(jcmd(s.pid(), "VM.native_memory", "summary.diff", "scale=KB"));
                }
            }
            for (Sample s : last) {
                System.out.println("-- worker " + s.slot() + " (pid " + s.pid() + ") heap at the end of the soak");
                System.out.println(jcmd(s.pid(), "GC.heap_info"));
            }
            awaitEmpty(client, queue, 120);
            if (drain > 0) {
                long drainStart = System.nanoTime();
                client.submitAll(task, Collections.nCopies(drain, 0L));
                awaitEmpty(client, queue, 600);
                r.put("drain_jobs_per_s", drain / ((System.nanoTime() - drainStart) / 1e9));
                for (Sample s : sample(dir, Double.NaN)) {
                    r.put("w" + s.slot() + "_rss_after_drain_mib", s.rssMib());
                }
            }
        } finally {
            master.destroy(); // SIGTERM: the master drains its workers and exits
            if (!master.waitFor(60, TimeUnit.SECONDS)) {
                master.destroyForcibly();
            }
        }
        r.put("load1_end", load());
        StringBuilder json = new StringBuilder("{\"soak\":\"" + name + "\",\"rate\":" + rate + ",\"minutes\":" + minutes);
        r.forEach((key, value) -> json.append(",\"").append(key).append("\":").append(String.format(Locale.ROOT, "%.2f", value)));
        System.out.println(json.append('}'));
        return r;
    }

    /** {@code binomic master} in its own JVM, with {@link SoakTasks} on its (and so its workers') class path. */
    private Process startMaster(Path dir, String queue, List<String> workerOptions) throws IOException {
        Path services = dir.resolve("services").resolve("META-INF").resolve("services");
        Files.createDirectories(services);
        Files.writeString(services.resolve(io.binomic.api.spi.TaskProvider.class.getName()), SoakTasks.class.getName() + "\n");
        List<String> args = new ArrayList<>(List.of("master", "--broker", redis.url(), "--queues", queue,
                "--workers", Integer.toString(workers), "--concurrency", Integer.toString(concurrency),
                "--heartbeat-interval", "1s", "--shutdown-grace", "2s", "--state-dir", dir.resolve("state").toString()));
        workerOptions.forEach(option -> args.add("--jvm-option=" + option));
        List<String> command = new ArrayList<>(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args));
        int classPath = command.indexOf("-cp") + 1;
        command.set(classPath, dir.resolve("services") + File.pathSeparator + command.get(classPath));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("master.log").toFile());
        builder.environment().keySet().removeIf(k -> k.startsWith("BINOMIC_"));
        return builder.start();
    }

    private void awaitRunning(Process master, Path dir) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (running(dir) < workers) {
            if (!master.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("the master did not get " + workers + " workers running; its log:\n"
                        + Files.readString(dir.resolve("master.log")));
            }
            Thread.sleep(100);
        }
    }

    private static long running(Path dir) {
        try (WorkerSlots slots = WorkerSlots.openReadOnly(dir.resolve("state").resolve("workers.slots"))) {
            return slots.snapshot().stream().filter(s -> s.state() == WorkerState.RUNNING && s.pid() != 0).count();
        } catch (RuntimeException e) {
            return 0; // no segment yet: the master is starting
        }
    }

    /** Submits one job at a time at {@link #rate} per second, from one thread per 1,000/s, until {@code stop}. */
    private List<Thread> produce(Binomic client, Task<Long, Void> task, AtomicLong submitted, AtomicBoolean stop) {
        int threads = Math.max(1, (rate + 999) / 1000);
        long interval = TimeUnit.SECONDS.toNanos(1) * threads / rate;
        long start = System.nanoTime();
        List<Thread> producers = new ArrayList<>();
        for (int p = 0; p < threads; p++) {
            long offset = interval * p / threads;
            producers.add(Thread.ofPlatform().name("soak-producer-" + p).start(() -> {
                for (long i = 0; !stop.get(); i++) {
                    long due = start + offset + i * interval;
                    for (long wait = due - System.nanoTime(); wait > 0 && !stop.get(); wait = due - System.nanoTime()) {
                        LockSupport.parkNanos(Math.min(wait, TimeUnit.MILLISECONDS.toNanos(100)));
                    }
                    if (!stop.get()) {
                        client.submit(task, 0L);
                        submitted.incrementAndGet();
                    }
                }
            }));
        }
        return producers;
    }

    private List<Sample> sample(Path dir, double minute) {
        List<Sample> samples = new ArrayList<>();
        try (WorkerSlots slots = WorkerSlots.openReadOnly(dir.resolve("state").resolve("workers.slots"))) {
            for (SlotSnapshot slot : slots.snapshot()) {
                long[] status = status(slot.pid());
                samples.add(new Sample(minute, slot.index(), slot.pid(), status[0] / 1024.0, (int) status[1], slot.counters().succeeded()));
            }
        }
        return samples;
    }

    /** VmRSS (KiB) and Threads of {@code /proc/PID/status}; zeros when the process is gone. */
    private static long[] status(long pid) {
        long[] values = new long[2];
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    values[0] = Long.parseLong(line.substring(6).strip().split("\\s+")[0]);
                } else if (line.startsWith("Threads:")) {
                    values[1] = Long.parseLong(line.substring(8).strip());
                }
            }
        } catch (IOException | RuntimeException e) {
            return values;
        }
        return values;
    }

    private static void print(List<Sample> now, List<Sample> all, QueueStats stats, long submitted) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%6.2f min", now.getFirst().minute()));
        for (Sample s : now) {
            List<Sample> mine = all.stream().filter(x -> x.slot() == s.slot() && x.pid() == s.pid()).toList();
            Sample previous = mine.size() > 1 ? mine.get(mine.size() - 2) : null;
            double perSecond = previous == null ? Double.NaN : (s.done() - previous.done()) / ((s.minute() - previous.minute()) * 60);
            line.append(String.format(Locale.ROOT, " | w%d pid %d rss %6.1f MiB threads %3d done/s %7.1f", s.slot(), s.pid(),
                    s.rssMib(), s.threads(), perSecond));
        }
        line.append(String.format(Locale.ROOT, " | submitted %,d backlog %d load %.2f", submitted, stats.ready() + stats.pending(), load()));
        System.out.println(line);
    }

    /** Least-squares slope of RSS over minutes, MiB/min; NaN with fewer than two samples. */
    private static double slope(List<Sample> samples) {
        int n = samples.size();
        if (n < 2) {
            return Double.NaN;
        }
        double mx = samples.stream().mapToDouble(Sample::minute).average().orElse(0);
        double my = samples.stream().mapToDouble(Sample::rssMib).average().orElse(0);
        double sxy = 0;
        double sxx = 0;
        for (Sample s : samples) {
            sxy += (s.minute() - mx) * (s.rssMib() - my);
            sxx += (s.minute() - mx) * (s.minute() - mx);
        }
        return sxx == 0 ? Double.NaN : sxy / sxx;
    }

    private static void awaitEmpty(Binomic client, String queue, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        for (QueueStats s = client.queueStats(queue); s.ready() + s.pending() > 0; s = client.queueStats(queue)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("queue " + queue + " not empty after " + seconds + " s: " + s);
            }
            Thread.sleep(20);
        }
    }

    private static String jcmd(long pid, String... command) {
        List<String> args = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(), Long.toString(pid)));
        args.addAll(List.of(command));
        try {
            Process p = new ProcessBuilder(args).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            p.waitFor(30, TimeUnit.SECONDS);
            return out;
        } catch (IOException e) {
            return "jcmd failed: " + e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }
}
