package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Scaling out, whether a Redis Cluster spreads the load: the same load on one Redis and on a Redis Cluster of 3 masters (no
 * replicas, so that each master's CPU is its own work), both {@code redis-server} processes on this
 * machine. {@value #QUEUES} ordinary queues, {@code bench.cluster.tasks} no-op tasks submitted in bulk,
 * then drained by one in-process worker. Per set-up: enqueue and drain rates, each master's share
 * of the messages and its Redis CPU per task (INFO cpu, user + sys), and the projection per Redis
 * core: a master whose CPU per task is c µs serves at most 10^6 / c tasks/s on a core of its own.
 *
 * <p>Then one busy queue: unpartitioned on one Redis and on the cluster (bound to one master), and
 * split into {@code bench.cluster.partitions} partitions (default 6) on the cluster, where its
 * partitions spread over the masters ({@code bench.cluster.partitions=0} skips it).
 *
 * <p>{@code ./mvnw -B -Pbench-cluster verify} (or {@code java -cp ... io.binomic.bench.ClusterBench}).
 */
public final class ClusterBench {
    private static final String HOST = "127.0.0.1";
    static final int QUEUES = 6;
    private static final int CONCURRENCY = 200;

    private ClusterBench() { }

    /** One redis-server process; calls go through redis-cli (few, outside the measured code). */
    private record Node(int port, Process process, Path dir) {
        Map<String, String> info(String section) {
            Map<String, String> values = new HashMap<>();
            for (String line : cli(port, "INFO", section).split("\r?\n")) {
                int colon = line.indexOf(':');
                if (colon > 0) {
                    values.put(line.substring(0, colon), line.substring(colon + 1).strip());
                }
            }
            return values;
        }

        double cpuSeconds() {
            Map<String, String> cpu = info("cpu");
            return Double.parseDouble(cpu.get("used_cpu_user")) + Double.parseDouble(cpu.get("used_cpu_sys"));
        }

        long calls(String command) {
            String stats = info("commandstats").get("cmdstat_" + command);
            if (stats == null) {
                return 0;
            }
            int from = stats.indexOf("calls=") + "calls=".length();
            return Long.parseLong(stats.substring(from, stats.indexOf(',', from)));
        }

        long errors(String kind) {
            String stat = info("errorstats").get("errorstat_" + kind);
            return stat == null ? 0 : Long.parseLong(stat.substring(stat.indexOf("count=") + 6));
        }
    }

    private record Sample(double enqueuePerS, double drainPerS, List<Double> share, List<Double> cpuMicrosPerTask,
                          List<Double> cpuMicrosPerOwnTask, double clusterCrossSlot, double readsPerTask) { }

    public static void main(String[] args) throws Exception {
        java.util.logging.Logger.getLogger("").setLevel(java.util.logging.Level.WARNING);
        int tasks = Integer.getInteger("bench.cluster.tasks", 200_000);
        int runs = Integer.getInteger("bench.runs", 1);
        int partitions = Integer.getInteger("bench.cluster.partitions", 6);
        boolean onlyPartitioned = Boolean.getBoolean("bench.cluster.onlyPartitioned");
        System.out.println("cores=" + Runtime.getRuntime().availableProcessors() + " tasks=" + tasks + " queues=" + QUEUES
                + " concurrency=" + CONCURRENCY + " runs=" + runs);
        List<Node> single = List.of(startNode(false));
        List<Node> cluster = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                cluster.add(startNode(true));
            }
            List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
            cluster.forEach(n -> create.add(HOST + ":" + n.port()));
            create.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
            run(create);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!cluster.stream().allMatch(n -> cli(n.port(), "CLUSTER", "INFO").contains("cluster_state:ok"))) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the bench cluster did not reach cluster_state:ok");
                }
                Thread.sleep(100);
            }
            String singleUrl = "redis://" + HOST + ":" + single.getFirst().port();
            String clusterUrl = "redis+cluster://" + cluster.stream().map(n -> HOST + ":" + n.port()).collect(Collectors.joining(","));
            measure("warm-up (one Redis)", singleUrl, single, tasks / 4, "w1");
            measure("warm-up (cluster)", clusterUrl, cluster, tasks / 4, "w2");
            for (int r = 1; r <= runs && !onlyPartitioned; r++) {
                print("one Redis", single, measure("one Redis", singleUrl, single, tasks, "s" + r));
                print("cluster, 3 masters", cluster, measure("cluster", clusterUrl, cluster, tasks, "c" + r));
            }
            for (int r = 1; r <= runs && partitions > 0; r++) {
                print("one Redis, 1 queue", single, measure(singleUrl, single, tasks, List.of("busy-s" + r), 1));
                print("cluster, 1 queue", cluster, measure(clusterUrl, cluster, tasks, List.of("busy-c" + r), 1));
                print("cluster, 1 queue x " + partitions, cluster,
                        measure(clusterUrl, cluster, tasks, List.of(partitionedName(cluster, "busy-p" + r, partitions)), partitions));
            }
        } finally {
            single.forEach(n -> BenchRedis.stop(n.process(), 10));
            cluster.forEach(n -> BenchRedis.stop(n.process(), 10));
        }
    }

    private static Sample measure(String name, String url, List<Node> nodes, int tasks, String runId) throws Exception {
        return measure(url, nodes, tasks, queueNames(nodes, runId), 1);
    }

    /**
     * {@code tasks} no-op tasks over {@code queues} ({@value #QUEUES} producer threads, taking the
     * queues in turn), each queue split into {@code partitions}, drained by one worker.
     */
    private static Sample measure(String url, List<Node> nodes, int tasks, List<String> queues, int partitions) throws Exception {
        List<Task<Long, Void>> defs = new ArrayList<>();
        for (String queue : queues) {
            defs.add(Task.builder("scale-" + queue, Long.class).queue(queue).build());
        }
        AtomicInteger done = new AtomicInteger();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(url).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(defs.stream().map(Task::queue).toList()).concurrency(CONCURRENCY)
                        .pollTimeout(Duration.ofMillis(100)).build())
                .build();
        Binomic.Builder builder = Binomic.builder().config(config);
        defs.forEach(d -> builder.handle(d, n -> {
            done.incrementAndGet();
            return null;
        }));
        long cross0 = nodes.stream().mapToLong(n -> n.errors("CROSSSLOT")).sum();
        try (Binomic binomic = builder.build().start()) {
            if (partitions > 1) {
                queues.forEach(q -> binomic.queues().setPartitions(q, partitions));
            }
            double[] cpu0 = cpu(nodes);
            long[] xadd0 = calls(nodes, "xadd");
            long reads0 = java.util.Arrays.stream(calls(nodes, "xreadgroup")).sum();
            long start = System.nanoTime();
            int per = tasks / QUEUES;
            List<Long> args = new ArrayList<>(per);
            for (int i = 0; i < per; i++) {
                args.add((long) i);
            }
            Thread[] producers = new Thread[QUEUES];
            for (int q = 0; q < QUEUES; q++) {
                Task<Long, Void> d = defs.get(q % defs.size());
                producers[q] = Thread.ofPlatform().start(() -> binomic.submitAll(d, args));
            }
            for (Thread t : producers) {
                t.join();
            }
            long enqueued = System.nanoTime();
            int total = per * QUEUES;
            binomic.startWorker();
            while (done.get() < total) {
                Thread.sleep(5);
            }
            long drained = System.nanoTime();
            double[] cpu1 = cpu(nodes);
            long[] xadd1 = calls(nodes, "xadd");
            long reads = java.util.Arrays.stream(calls(nodes, "xreadgroup")).sum() - reads0;
            List<Double> share = new ArrayList<>();
            List<Double> perTask = new ArrayList<>();
            List<Double> perOwn = new ArrayList<>();
            for (int i = 0; i < nodes.size(); i++) {
                long own = xadd1[i] - xadd0[i];
                share.add((double) own / total);
                perTask.add((cpu1[i] - cpu0[i]) * 1e6 / total);
                perOwn.add(own == 0 ? 0 : (cpu1[i] - cpu0[i]) * 1e6 / own);
            }
            long cross = nodes.stream().mapToLong(n -> n.errors("CROSSSLOT")).sum() - cross0;
            return new Sample(total / ((enqueued - start) / 1e9), total / ((drained - enqueued) / 1e9), share, perTask, perOwn, cross,
                    (double) reads / total);
        }
    }

    private static void print(String name, List<Node> nodes, Sample s) {
        System.out.printf(Locale.ROOT, "%-20s enqueue %,9.0f tasks/s  drain %,8.0f tasks/s  XREADGROUP per task %.3f  CROSSSLOT %d%n",
                name, s.enqueuePerS(), s.drainPerS(), s.readsPerTask(), (long) s.clusterCrossSlot());
        double projected = 0;
        for (int i = 0; i < nodes.size(); i++) {
            double perCore = s.cpuMicrosPerOwnTask().get(i) == 0 ? 0 : 1e6 / s.cpuMicrosPerOwnTask().get(i);
            projected += perCore * s.share().get(i);
            System.out.printf(Locale.ROOT, "  node %d: share %5.1f %%  Redis CPU %5.1f us per task of its own"
                            + " (%5.1f us per task overall)  -> %,8.0f tasks/s per core%n", i + 1, 100 * s.share().get(i),
                    s.cpuMicrosPerOwnTask().get(i), s.cpuMicrosPerTask().get(i), perCore);
        }
        // The busiest master saturates first: the cluster's ceiling is its core's rate divided by its share.
        double ceiling = Double.MAX_VALUE;
        for (int i = 0; i < nodes.size(); i++) {
            if (s.share().get(i) > 0) {
                ceiling = Math.min(ceiling, 1e6 / s.cpuMicrosPerOwnTask().get(i) / s.share().get(i));
            }
        }
        System.out.printf(Locale.ROOT, "  projection, one core per Redis: %,.0f tasks/s (busiest master saturates first;"
                + " mean per-core rate x %d = %,.0f)%n", ceiling, nodes.size(), projected * nodes.size());
    }

    /**
     * {@value #QUEUES} queue names. On a cluster with {@code bench.cluster.balanced} (the default) they
     * are chosen so that each master serves as many queues ({@code CLUSTER KEYSLOT} of the stream key
     * against each master's slots), as an operator placing queues would; otherwise they fall where the
     * hash puts them.
     */
    private static List<String> queueNames(List<Node> nodes, String runId) {
        List<String> names = new ArrayList<>();
        if (nodes.size() == 1 || !Boolean.parseBoolean(System.getProperty("bench.cluster.balanced", "true"))) {
            for (int q = 0; q < QUEUES; q++) {
                names.add("scale-" + runId + "-" + q);
            }
            return names;
        }
        List<List<int[]>> slots = slotRanges(nodes);
        int[] count = new int[nodes.size()];
        for (int i = 0; names.size() < QUEUES; i++) {
            String q = "scale-" + runId + "-" + i;
            int m = masterOf(nodes, slots, q);
            if (count[m] < QUEUES / nodes.size()) {
                count[m]++;
                names.add(q);
            }
        }
        return names;
    }

    /**
     * A queue name for {@code partitions} partitions. With {@code bench.cluster.balanced} (the
     * default) one whose partitions fall evenly on the masters (as an operator checking
     * {@code CLUSTER KEYSLOT} would choose, or by taking more partitions than masters); otherwise
     * {@code base} as its partitions fall.
     */
    private static String partitionedName(List<Node> nodes, String base, int partitions) {
        if (!Boolean.parseBoolean(System.getProperty("bench.cluster.balanced", "true")) || partitions % nodes.size() != 0) {
            return base;
        }
        List<List<int[]>> slots = slotRanges(nodes);
        for (int i = 0; ; i++) {
            String q = base + "-" + i;
            int[] count = new int[nodes.size()];
            for (int p = 0; p < partitions; p++) {
                count[masterOf(nodes, slots, p == 0 ? q : q + "@" + p)]++;
            }
            if (java.util.Arrays.stream(count).allMatch(c -> c == partitions / nodes.size())) {
                return q;
            }
        }
    }

    /** The index in {@code nodes} of the master whose {@code slots} hold the keys of {@code queue}. */
    private static int masterOf(List<Node> nodes, List<List<int[]>> slots, String queue) {
        int slot = Integer.parseInt(cli(nodes.getFirst().port(), "CLUSTER", "KEYSLOT", "binomic:{" + queue + "}:stream").strip());
        for (int m = 0; m < nodes.size(); m++) {
            if (slots.get(m).stream().anyMatch(r -> r[0] <= slot && slot <= r[1])) {
                return m;
            }
        }
        throw new IllegalStateException("no master holds slot " + slot + " of queue " + queue);
    }

    private static List<List<int[]>> slotRanges(List<Node> nodes) {
        List<List<int[]>> slots = new ArrayList<>();
        for (Node n : nodes) {
            List<int[]> ranges = new ArrayList<>();
            String myself = cli(n.port(), "CLUSTER", "NODES").lines().filter(l -> l.contains("myself")).findFirst().orElseThrow();
            String[] parts = myself.split(" ");
            for (int i = 8; i < parts.length; i++) {
                String[] ab = parts[i].split("-");
                ranges.add(new int[] {Integer.parseInt(ab[0]), Integer.parseInt(ab[ab.length - 1])});
            }
            slots.add(ranges);
        }
        return slots;
    }

    private static double[] cpu(List<Node> nodes) {
        return nodes.stream().mapToDouble(Node::cpuSeconds).toArray();
    }

    private static long[] calls(List<Node> nodes, String command) {
        return nodes.stream().mapToLong(n -> n.calls(command)).toArray();
    }

    private static Node startNode(boolean cluster) throws IOException, InterruptedException {
        int port = freePort();
        Path dir = Files.createTempDirectory("binomic-bench-cluster-");
        List<String> command = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind", HOST,
                "--save", "", "--appendonly", "no", "--dir", dir.toString()));
        if (cluster) {
            command.addAll(List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"));
        }
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                if (cli(port, "PING").strip().equals("PONG")) {
                    break;
                }
            } catch (IllegalStateException notYet) {
                // retry
            }
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("redis-server did not start on port " + port + "; see " + dir);
            }
            Thread.sleep(50);
        }
        return new Node(port, process, dir);
    }

    /** A free port whose cluster bus port (+10000) is free too. */
    private static int freePort() {
        while (true) {
            int p = ThreadLocalRandom.current().nextInt(20000, 30000);
            if (free(p) && free(p + 10000)) {
                return p;
            }
        }
    }

    private static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort() == port;
        } catch (IOException e) {
            return false;
        }
    }

    private static String cli(int port, String... command) {
        List<String> full = new ArrayList<>(List.of("redis-cli", "-h", HOST, "-p", Integer.toString(port)));
        full.addAll(List.of(command));
        return run(full);
    }

    private static String run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (p.waitFor() != 0) {
                throw new IllegalStateException(command + " exited with " + p.exitValue() + ": " + out);
            }
            return out;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command.getFirst() + ": apt-get install redis-tools", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + command, e);
        }
    }
}
