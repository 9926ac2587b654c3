package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskHandler;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.SchedulerProvider;
import java.util.ServiceLoader;
import io.binomic.core.Binomic;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The worker JVM of {@link BenchBatches}: one JVM for a whole run, so that every row of it is drained
 * by the same warmed code. Commands on standard input, one a line:
 * <ul>
 *   <li>{@code serve <job queue> <callback queue> <batch size>}: starts a Binomic worker on both queues
 *       with the handlers of every task below, and answers {@code serving}; the first job started prints
 *       {@code first-start <epoch µs>}. A batch size above 0 measures callback lag: the child that ends its
 *       batch's count (argument: the batch's number) has an ordinary job ({@link #floorTask}) submitted at that
 *       moment (an even batch's from another thread; an odd one's in the handler, before it returns), and the callback prints {@code cbparts} (the lag's parts, seen by a
 *       {@link TimingBroker} the worker's broker calls go through) and {@code cb <batch> <µs since the last
 *       child's end>}, the ordinary job {@code floor <µs since its submit>};</li>
 *   <li>{@code stop}: closes that worker and prints {@code wf <p50> <p99> <max> <nodes> <join>} (µs) for the
 *       workflow nodes it ran (each dependent's start less its last dependency's end; join: the longest of the wide
 *       graphs' last nodes), then {@code stopped}.</li>
 * </ul>
 * Arguments: redis URL, concurrency. It first drains a warm-up queue of its own.
 */
public final class BenchBatchesWorker {
    /** Nodes of a workflow of the bench; the wide graph is one root, {@code NODES - 2} nodes on it, and a join of them all. */
    static final int NODES = 1000;
    /** The layered graph: layers of {@code WIDTH}, each node depending on two of the layer before. */
    static final int WIDTH = 100;
    static final long WIDE = 1;
    static final long LAYERED = 2;

    private BenchBatchesWorker() { }

    static Task<Long, Void> plainTask(String queue) { return Task.builder("bb-plain", Long.class).queue(queue).build(); }

    /** A tracked task without a result: its job record kept for a day, as a batch's child's is. */
    static Task<Long, Void> trackedTask(String queue) {
        return Task.builder("bb-tracked", Long.class).queue(queue).keepStatusFor(Duration.ofDays(1)).build();
    }

    static Task<Long, Void> childTask(String queue) { return Task.builder("bb-child", Long.class).queue(queue).build(); }

    static Task<Long, Void> callbackTask(String queue) { return Task.builder("bb-callback", Long.class).queue(queue).build(); }

    static Task<Long, Void> floorTask(String queue) { return Task.builder("bb-floor", Long.class).queue(queue).build(); }

    static Task<Long, Void> nodeTask(String queue) { return Task.builder("bb-node", Long.class).queue(queue).build(); }

    /** A workflow node's argument: its graph's kind, the workflow's number in its row (below 1,000) and the node's index. */
    static long nodeArgument(long kind, int workflow, int index) { return kind * 1_000_000 + (long) workflow * NODES + index; }

    /** The indexes a node depends on, in the wide or the layered graph. */
    static int[] dependencies(long kind, int index) {
        if (kind == WIDE) {
            if (index == 0) {
                return new int[0];
            }
            if (index < NODES - 1) {
                return new int[] {0};
            }
            int[] all = new int[NODES - 2];
            Arrays.setAll(all, i -> i + 1);
            return all;
        }
        if (index < WIDTH) {
            return new int[0];
        }
        int layer = index / WIDTH;
        int i = index % WIDTH;
        return new int[] {(layer - 1) * WIDTH + i, (layer - 1) * WIDTH + (i + 1) % WIDTH};
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        int concurrency = Integer.parseInt(args[1]);
        warmUp(url, concurrency);
        System.out.println("ready");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Serving serving = null;
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            String[] c = line.split(" ");
            if (c[0].equals("serve")) {
                serving = new Serving(url, concurrency, c[1], c[2], Integer.parseInt(c[3]));
                System.out.println("serving");
            } else if (c[0].equals("stop") && serving != null) {
                serving.close();
                System.out.println(serving.workflowLags());
                serving = null;
                System.out.println("stopped");
            }
        }
    }

    /** Drains every row's kind of job once, unmeasured, so that the measured rows run compiled code. */
    private static void warmUp(String url, int concurrency) throws Exception {
        String jobs = "bb-warmup-jobs";
        String callbacks = "bb-warmup-cb";
        try (Serving s = new Serving(url, concurrency, jobs, callbacks, 0)) {
            Binomic b = s.binomic;
            for (int round = 0; round < 3; round++) {
                b.submitAll(plainTask(jobs), java.util.Collections.nCopies(10_000, 0L));
                b.submitAll(trackedTask(jobs), java.util.Collections.nCopies(10_000, 0L));
                var batch = b.batch().onComplete(callbackTask(callbacks), -1L);
                for (int i = 0; i < 10_000; i++) {
                    batch.add(childTask(jobs), -1L);
                }
                batch.submit();
                b.submit(BenchBatches.workflow(jobs, round % 2 == 0 ? WIDE : LAYERED, 0));
                long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
                while (b.queueStats(jobs).ready() + b.queueStats(jobs).pending() > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                s.reset();
            }
        }
    }

    /** One Binomic worker on a job queue and a callback queue, with what the handlers measure. */
    private static final class Serving implements AutoCloseable {
        private final Binomic binomic;
        private final AtomicBoolean first = new AtomicBoolean(true);
        private final ConcurrentHashMap<Long, AtomicInteger> ended = new ConcurrentHashMap<>();
        private final ConcurrentHashMap<Long, Long> lastEnd = new ConcurrentHashMap<>();
        private final ConcurrentHashMap<Long, Long> nodeEnds = new ConcurrentHashMap<>();
        private final List<Long> nodeLags = java.util.Collections.synchronizedList(new ArrayList<>());
        private final List<Long> joinLags = java.util.Collections.synchronizedList(new ArrayList<>());
        private final java.util.concurrent.ExecutorService floorSubmits = java.util.concurrent.Executors.newSingleThreadExecutor();
        /** When the last child ended, a settle call was under way since (epoch µs), or 0; by batch. */
        private final ConcurrentHashMap<Long, Long> settlingAtEnd = new ConcurrentHashMap<>();

        Serving(String url, int concurrency, String jobs, String callbacks, int batchSize) {
            AtomicReference<Binomic> self = new AtomicReference<>();
            BinomicConfig config = BinomicConfig.builder().brokerUrl(url)
                    .worker(WorkerConfig.builder().queues(jobs, callbacks).concurrency(concurrency).build()).build();
            // Only the callback-lag runs look into the broker calls: the drain rows run as an application would.
            Broker redis = batchSize > 0 ? redisProvider(BrokerProvider.class).create(config.broker()) : null;
            TimingBroker timing = redis == null ? null : new TimingBroker(redis, "bb-child", "bb-callback");
            TaskHandler<Long, Void> noop = n -> {
                started();
                return null;
            };
            TaskHandler<Long, Void> child = n -> {
                started();
                if (batchSize > 0 && n >= 0 && ended.computeIfAbsent(n, k -> new AtomicInteger()).incrementAndGet() == batchSize) {
                    long now = BenchWorker.nowMicros();
                    settlingAtEnd.put(n, timing.settleUnderWaySince());
                    lastEnd.put(n, now);
                    if (n % 2 == 0) {
                        // submitted off this handler: its round trip would hold back the child's own outcome, and the callback
                        floorSubmits.execute(() -> self.get().submit(floorTask(callbacks), now));
                    } else {
                        self.get().submit(floorTask(callbacks), now); // in the handler: what an odd batch's lag is measured with
                    }
                }
                return null;
            };
            TaskHandler<Long, Void> callback = n -> {
                long now = BenchWorker.nowMicros();
                Long end = lastEnd.get(n);
                if (end != null) {
                    // the parts of the lag: <the last child's outcome waiting for its settle call> <that call>
                    // <the fetch returning the callback after it> <fetch to handler> <outcomes in that call>
                    // <1 if the fetch began before that call ended> <how long a settle call had been under way at the end, -1 if none>
                    long settling = settlingAtEnd.getOrDefault(n, 0L);
                    long settleEnd = timing.childSettleEnded();
                    System.out.println("cbparts " + n + " " + (timing.childSettleStart - end) + " "
                            + (settleEnd - timing.childSettleStart) + " " + (timing.callbackFetchEnd - settleEnd)
                            + " " + (now - timing.callbackFetchEnd) + " " + timing.childSettleSize + " "
                            + (timing.callbackFetchStart < settleEnd ? 1 : 0) + " " + (settling == 0 ? -1 : end - settling));
                    System.out.println("cb " + n + " " + (now - end));
                }
                return null;
            };
            TaskHandler<Long, Void> floor = submitted -> {
                System.out.println("floor " + (BenchWorker.nowMicros() - submitted));
                return null;
            };
            TaskHandler<Long, Void> node = n -> {
                long now = BenchWorker.nowMicros();
                started();
                long kind = n / 1_000_000;
                long base = n - n % NODES;
                int index = (int) (n % NODES);
                int[] deps = dependencies(kind, index);
                if (deps.length > 0) {
                    long last = 0;
                    for (int d : deps) {
                        last = Math.max(last, nodeEnds.getOrDefault(base + d, 0L));
                    }
                    nodeLags.add(now - last);
                    if (kind == WIDE && index == NODES - 1) {
                        joinLags.add(now - last);
                    }
                }
                nodeEnds.put(n, BenchWorker.nowMicros());
                return null;
            };
            Binomic.Builder builder = Binomic.builder().config(config);
            if (timing != null) {
                builder.broker(timing).scheduler(redisProvider(SchedulerProvider.class).create(redis));
            }
            binomic = builder
                    .handle(plainTask(jobs), noop).handle(trackedTask(jobs), noop).handle(childTask(jobs), child)
                    .handle(nodeTask(jobs), node).handle(callbackTask(callbacks), callback).handle(floorTask(callbacks), floor)
                    .build().start();
            self.set(binomic);
            binomic.startWorker();
        }

        /** The Redis provider of {@code type}, as the application's own build finds it (binomic-redis is a runtime dependency). */
        private static <T> T redisProvider(Class<T> type) {
            return ServiceLoader.load(type).stream().map(ServiceLoader.Provider::get)
                    .filter(p -> p instanceof BrokerProvider b ? b.id().equals("redis") : ((SchedulerProvider) p).id().equals("redis"))
                    .findFirst().orElseThrow(() -> new IllegalStateException("no Redis " + type.getSimpleName() + " on the class path"));
        }

        private void started() {
            if (first.get() && first.compareAndSet(true, false)) {
                System.out.println("first-start " + BenchWorker.nowMicros());
            }
        }

        void reset() {
            first.set(true);
            nodeLags.clear();
            joinLags.clear();
        }

        /** {@code wf <p50> <p99> <max> <nodes> <the wide graphs' joins: max>}, µs; -1 where none ran. */
        String workflowLags() {
            long[] lags = sorted(nodeLags);
            long[] joins = sorted(joinLags);
            if (lags.length == 0) {
                return "wf -1 -1 -1 0 -1";
            }
            return "wf " + lags[lags.length / 2] + " " + lags[Math.min(lags.length - 1, (int) Math.ceil(0.99 * lags.length) - 1)] + " "
                    + lags[lags.length - 1] + " " + lags.length + " " + (joins.length == 0 ? -1 : joins[joins.length - 1]);
        }

        private static long[] sorted(List<Long> values) {
            synchronized (values) {
                return values.stream().mapToLong(Long::longValue).sorted().toArray();
            }
        }

        @Override
        public void close() {
            floorSubmits.close();
            binomic.close();
        }
    }
}
