package io.binomic.it;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What broker option {@code wait.replicas=1} costs (not a test: run it by hand). A primary with one
 * replica on loopback (from {@link RedisSentinelSet}); {@code runs} times (after one uncounted
 * warm-up): single enqueues (latency of each), {@code enqueueAll} of {@code bulk} messages in chunks
 * of 10,000, and a drain with fetch + settle batches of 100, the two settings taking turns call by
 * call. Prints one line per run and phase, then the medians over the runs.
 *
 * <pre>{@code
 * ./mvnw -q -B verify -pl binomic-it -am -DskipTests
 * java -cp "binomic-it/target/test-classes:binomic-it/target/classes:$(cat cp.txt)" io.binomic.it.ReplicaWaitBenchmark 3 2000 50000
 * }</pre>
 */
public final class ReplicaWaitBenchmark {
    private ReplicaWaitBenchmark() { }

    public static void main(String[] args) throws Exception {
        int runs = args.length > 0 ? Integer.parseInt(args[0]) : 3;
        int singles = args.length > 1 ? Integer.parseInt(args[1]) : 2000;
        int bulk = args.length > 2 ? Integer.parseInt(args[2]) : 50_000;
        try (RedisSentinelSet set = RedisSentinelSet.start()) {
            String url = set.primary().url();
            Map<String, List<Double>> results = new java.util.TreeMap<>();
            // Run 0 warms the JIT and is not counted. The two settings take turns operation by operation,
            // so that a busy machine slows both alike.
            for (int run = 0; run <= runs; run++) {
                try (Broker off = Brokers.redisProvider().create(BrokerConfig.builder().url(url).build());
                     Broker on = Brokers.redisProvider().create(BrokerConfig.builder().url(url)
                             .options(Map.of("wait.replicas", "1", "wait.timeout", "1s")).build())) {
                    String[] queues = {"bench-off-" + run, "bench-on-" + run};
                    Broker[] brokers = {off, on};
                    off.start(List.of(queues[0]));
                    on.start(List.of(queues[1]));
                    measure(brokers, queues, run, singles, bulk, run == 0 ? new java.util.HashMap<>() : results);
                }
                set.call(set.primary(), "FLUSHALL");
            }
            results.forEach((key, values) -> System.out.printf("BENCH-MEDIAN %s median=%.1f runs=%s%n", key, median(values), values));
        }
    }

    private static final String[] TAGS = {"wait.replicas=0", "wait.replicas=1"};

    private static void measure(Broker[] brokers, String[] queues, int run, int singles, int bulk,
                                Map<String, List<Double>> results) throws InterruptedException {
        byte[] payload = "{\"n\":12345,\"name\":\"benchmark\"}".getBytes(StandardCharsets.UTF_8);

        long[][] latencies = new long[2][singles];
        for (int i = 0; i < singles; i++) {
            for (int b = 0; b < 2; b++) {
                Message m = Message.fromWire(UUID.randomUUID(), "bench", queues[b], 1, Instant.now(), payload, Map.of());
                long t = System.nanoTime();
                brokers[b].enqueue(m);
                latencies[b][i] = System.nanoTime() - t;
            }
        }
        for (int b = 0; b < 2; b++) {
            Arrays.sort(latencies[b]);
            record(results, TAGS[b] + " enqueue_median_us", latencies[b][singles / 2] / 1e3, run);
            record(results, TAGS[b] + " enqueue_p99_us", latencies[b][(int) (singles * 0.99)] / 1e3, run);
        }

        long[] bulkNanos = new long[2];
        for (int from = 0; from < bulk; from += 10_000) {
            for (int b = 0; b < 2; b++) {
                List<Message> chunk = new ArrayList<>();
                for (int i = from; i < Math.min(bulk, from + 10_000); i++) {
                    chunk.add(Message.fromWire(UUID.randomUUID(), "bench", queues[b], 1, Instant.now(), payload, Map.of()));
                }
                long t = System.nanoTime();
                brokers[b].enqueueAll(chunk);
                bulkNanos[b] += System.nanoTime() - t;
            }
        }
        for (int b = 0; b < 2; b++) {
            record(results, TAGS[b] + " enqueueAll_msgs_per_s", bulk / (bulkNanos[b] / 1e9), run);
        }

        int total = singles + bulk;
        int[] drained = new int[2];
        long[] drainNanos = new long[2];
        List<List<Long>> settles = List.of(new ArrayList<>(), new ArrayList<>());
        while (drained[0] < total || drained[1] < total) {
            for (int b = 0; b < 2; b++) {
                if (drained[b] >= total) {
                    continue;
                }
                long t = System.nanoTime();
                List<Delivery> got = brokers[b].fetch(List.of(queues[b]), "bench-consumer", 100, Duration.ofMillis(100));
                long s = System.nanoTime();
                brokers[b].settle("bench-consumer", got.stream().<Settlement>map(Settlement.Ack::new).toList());
                long e = System.nanoTime();
                settles.get(b).add(e - s);
                drainNanos[b] += e - t;
                drained[b] += got.size();
            }
        }
        for (int b = 0; b < 2; b++) {
            record(results, TAGS[b] + " drain_msgs_per_s", total / (drainNanos[b] / 1e9), run);
            List<Long> sorted = new ArrayList<>(settles.get(b));
            sorted.sort(null);
            record(results, TAGS[b] + " settle100_median_us", sorted.get(sorted.size() / 2) / 1e3, run);
        }
    }

    private static void record(Map<String, List<Double>> results, String key, double value, int run) {
        System.out.printf("BENCH run=%d %s=%.1f%n", run, key, value);
        results.computeIfAbsent(key, k -> new ArrayList<>()).add(Math.round(value * 10) / 10.0);
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        return sorted.get(sorted.size() / 2);
    }
}
