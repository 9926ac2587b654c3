package io.binomic.bench;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Message;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RBatch;
import org.redisson.api.RScript;
import org.redisson.api.RStream;
import org.redisson.api.RedissonClient;
import org.redisson.api.stream.StreamAddArgs;
import org.redisson.api.stream.StreamCreateGroupArgs;
import org.redisson.api.stream.StreamMessageId;
import org.redisson.api.stream.StreamReadGroupArgs;
import org.redisson.client.codec.ByteArrayCodec;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * The bare-Redisson baseline, the ceiling Binomic's Redis rates are judged against: what the same
 * Redisson client, configured exactly as the
 * Binomic Redis broker configures it ({@code RedissonSetup}, read reflectively: the bench runs on
 * the class path), does with the same stream entries and no framework at all.
 * <ul>
 *   <li>{@link #xadd}: pipelined {@code XADD} of entries with the fields a Binomic message of the
 *       bench's task has (encoded once, a fresh id per entry), in pipelines of 1,000 with two in
 *       flight, as the broker's {@code enqueueAll} sends them; run in the bench's JVM;</li>
 *   <li>{@link #main} (drain): a separate JVM, like the Binomic worker: one loop of
 *       {@code XREADGROUP ... COUNT 1000} (read with {@code ByteArrayCodec}: the broker reads values as bytes), no-op
 *       work (each entry's fields are looked at), then one pipeline of {@code XACK} of the batch's
 *       ids plus {@code XDEL} of them ({@code xdel}), {@code XACK} alone ({@code ack}), or the least
 *       a fenced settlement must do ({@code fenced}: one script per batch that lists what this
 *       consumer still holds, one {@code XPENDING} per run of 64 ids as the broker's settle script
 *       does, and acks only that), sent asynchronously while the next read goes out (one ack
 *       pipeline in flight). A mode ending in {@code -fresh} skips the warm-up: the drain of a JVM
 *       that has just started, against which the fresh Binomic worker is measured.</li>
 * </ul>
 * Drain protocol on standard output: {@code ready} once warmed up (it first drains
 * {@value #WARMUP} entries of a stream of its own), then, after {@code go} on standard input,
 * {@code first-start <epoch µs>} when the first batch arrives and {@code done <epoch µs>} when the
 * last ack pipeline has been answered.
 */
public final class BenchBaseline {
    static final String GROUP = "binomic";
    static final int CHUNK = 1000;
    private static final int IN_FLIGHT = 2;
    private static final int WARMUP = 100_000;

    private BenchBaseline() { }

    /** The Redisson configuration the Binomic Redis broker builds for {@code url}. */
    static Config redissonConfig(String url) {
        try {
            Class<?> setup = Class.forName("io.binomic.redis.internal.RedissonSetup");
            Method of = setup.getDeclaredMethod("of", BrokerConfig.class);
            of.setAccessible(true);
            Object built = of.invoke(null, BrokerConfig.builder().url(url).build());
            Method redisson = setup.getDeclaredMethod("redisson");
            redisson.setAccessible(true);
            return (Config) redisson.invoke(built);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read the broker's Redisson settings (RedissonSetup.of(...).redisson()): " + e, e);
        }
    }

    /** The fields of one bench message as the broker writes them ({@code StreamFields.encode}), as UTF-8 bytes. */
    static Map<byte[], byte[]> entryFields(String queue) {
        try {
            Class<?> fields = Class.forName("io.binomic.redis.internal.StreamFields");
            Method encode = fields.getDeclaredMethod("encode", Message.class);
            encode.setAccessible(true);
            Message m = Message.fromWire(UUID.randomUUID(), "bench", queue, 1, Instant.now(), "0".getBytes(StandardCharsets.UTF_8), Map.of());
            @SuppressWarnings("unchecked")
            Map<String, String> encoded = (Map<String, String>) encode.invoke(null, m);
            Map<byte[], byte[]> bytes = new LinkedHashMap<>();
            encoded.forEach((k, v) -> bytes.put(k.getBytes(StandardCharsets.UTF_8), v.getBytes(StandardCharsets.UTF_8)));
            return bytes;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot encode a message as the broker does (StreamFields.encode): " + e, e);
        }
    }

    static void createGroup(RedissonClient client, String stream) {
        try {
            client.getStream(stream, StringCodec.INSTANCE).createGroup(StreamCreateGroupArgs.name(GROUP).id(StreamMessageId.ALL).makeStream());
        } catch (RuntimeException e) {
            if (!String.valueOf(e.getMessage()).contains("BUSYGROUP")) {
                throw e;
            }
        }
    }

    /** Pipelined XADD of {@code n} entries onto {@code stream}; each gets a fresh message id, the other fields are shared. */
    static void xadd(RedissonClient client, String stream, String queue, int n) {
        Map<byte[], byte[]> template = entryFields(queue);
        byte[] idKey = idFieldOf(template, "id".getBytes(StandardCharsets.UTF_8));
        Deque<CompletableFuture<?>> inFlight = new ArrayDeque<>();
        for (int from = 0; from < n; from += CHUNK) {
            RBatch batch = client.createBatch();
            org.redisson.api.RStreamAsync<byte[], byte[]> s = batch.getStream(stream, ByteArrayCodec.INSTANCE);
            for (int i = from; i < Math.min(n, from + CHUNK); i++) {
                Map<byte[], byte[]> fields = new LinkedHashMap<>();
                template.forEach((k, v) -> fields.put(k, k == idKey ? UUID.randomUUID().toString().getBytes(StandardCharsets.UTF_8) : v));
                s.addAsync(StreamAddArgs.entries(fields));
            }
            inFlight.add(batch.executeAsync().toCompletableFuture());
            if (inFlight.size() >= IN_FLIGHT) {
                inFlight.poll().join();
            }
        }
        inFlight.forEach(CompletableFuture::join);
    }

    private static byte[] idFieldOf(Map<byte[], byte[]> template, byte[] name) {
        for (byte[] k : template.keySet()) {
            if (java.util.Arrays.equals(k, name)) {
                return k;
            }
        }
        throw new IllegalStateException("a broker entry without an id field: " + template.size() + " fields");
    }

    /**
     * Drains {@code expected} entries of {@code stream}; returns the epoch µs of the first batch's
     * arrival and of the last ack's reply.
     */
    static long[] drain(RedissonClient client, String stream, String consumer, int expected, Ack ackMode, Runnable onFirst) {
        return drain(client, stream, consumer, expected, ackMode, false, onFirst);
    }

    /**
     * As {@link #drain(RedissonClient, String, String, int, Ack, Runnable)}; with {@code threadPerTask}
     * each entry's no-op work runs on a virtual thread of its own, as a Binomic worker runs each task
     * (the design's one virtual thread per task), and a batch is acked once all its threads are done.
     */
    static long[] drain(RedissonClient client, String stream, String consumer, int expected, Ack ackMode, boolean threadPerTask,
                        Runnable onFirst) {
        // bytes, as the broker reads (a String per value would make the bare loop dearer than Binomic's read)
        RStream<byte[], byte[]> s = client.getStream(stream, ByteArrayCodec.INSTANCE);
        StreamReadGroupArgs args = StreamReadGroupArgs.neverDelivered().count(CHUNK);
        CompletableFuture<?> ack = CompletableFuture.completedFuture(null);
        long first = 0;
        int done = 0;
        long touched = 0;
        while (done < expected) {
            Map<StreamMessageId, Map<byte[], byte[]>> got = s.readGroup(GROUP, consumer, args);
            if (got == null || got.isEmpty()) {
                java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
                continue;
            }
            if (first == 0) {
                first = BenchWorker.nowMicros();
                onFirst.run();
            }
            StreamMessageId[] ids = new StreamMessageId[got.size()];
            int i = 0;
            if (threadPerTask) {
                java.util.concurrent.CountDownLatch finished = new java.util.concurrent.CountDownLatch(got.size());
                java.util.concurrent.atomic.LongAdder seen = new java.util.concurrent.atomic.LongAdder();
                for (Map.Entry<StreamMessageId, Map<byte[], byte[]>> e : got.entrySet()) {
                    ids[i++] = e.getKey();
                    Map<byte[], byte[]> fields = e.getValue();
                    Thread.ofVirtual().start(() -> {
                        seen.add(fields.size()); // the no-op work: look at the entry
                        finished.countDown();
                    });
                }
                try {
                    finished.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while a batch's tasks ran", e);
                }
                touched += seen.sum();
            } else {
                for (Map.Entry<StreamMessageId, Map<byte[], byte[]>> e : got.entrySet()) {
                    ids[i++] = e.getKey();
                    touched += e.getValue().size(); // the no-op work: look at the entry
                }
            }
            ack.join();
            RBatch batch = client.createBatch();
            if (ackMode == Ack.FENCED) {
                Object[] argv = new Object[ids.length + 2];
                argv[0] = GROUP;
                argv[1] = consumer;
                for (int k = 0; k < ids.length; k++) {
                    argv[k + 2] = ids[k].toString();
                }
                batch.getScript(StringCodec.INSTANCE).evalAsync(stream, RScript.Mode.READ_WRITE, FENCED_ACK,
                        RScript.ReturnType.LONG, List.of(stream), argv);
            } else {
                org.redisson.api.RStreamAsync<String, String> b = batch.getStream(stream, StringCodec.INSTANCE);
                b.ackAsync(GROUP, ids);
                if (ackMode == Ack.XDEL) {
                    b.removeAsync(ids);
                }
            }
            ack = batch.executeAsync().toCompletableFuture();
            done += ids.length;
        }
        ack.join();
        if (touched < expected) {
            throw new IllegalStateException("entries without fields: " + touched);
        }
        return new long[] {first, BenchWorker.nowMicros()};
    }

    /** How the bare loop settles a batch. */
    enum Ack { XDEL, ACK, FENCED }

    /**
     * The least a fenced settlement costs: ack only what this consumer still holds, found as the
     * broker's settle script finds it (one {@code XPENDING start end count consumer} per run of 64
     * ids of the sorted batch). No lease, job record, limit or stats work: a lower bound of the
     * broker's script, not a copy of it.
     */
    private static final String FENCED_ACK = """
            local key, group, consumer = KEYS[1], ARGV[1], ARGV[2]
            local held = {}
            local i, n = 3, #ARGV
            while i <= n do
              local j = math.min(i + 63, n)
              for _, e in ipairs(redis.call('XPENDING', key, group, ARGV[i], ARGV[j], j - i + 1, consumer)) do
                held[#held + 1] = e[1]
              end
              i = j + 1
            end
            if #held > 0 then
              redis.call('XACK', key, group, unpack(held))
            end
            return #held
            """;

    /** One entry as {@link #xadd} writes it, plus field {@code t}: the epoch µs of its submit. */
    static void xaddOne(RedissonClient client, String stream, Map<byte[], byte[]> template) {
        Map<byte[], byte[]> fields = new LinkedHashMap<>(template);
        fields.put(T, Long.toString(BenchWorker.nowMicros()).getBytes(StandardCharsets.UTF_8));
        client.<byte[], byte[]>getStream(stream, ByteArrayCodec.INSTANCE).add(StreamAddArgs.entries(fields));
    }

    private static final byte[] T = "t".getBytes(StandardCharsets.UTF_8);

    /**
     * The latency floor of the stack: one loop of {@code XREADGROUP ... COUNT 100 BLOCK 1000} (as the
     * worker's fetcher blocks for its poll timeout), the entry's {@code t} subtracted from the time it
     * is read, the batch acked asynchronously; no hand-off to another thread. Prints
     * {@code latency <p50> <p99> <p99.9> <max>} (µs) over the entries after the first {@code warmup}.
     */
    static void latency(RedissonClient client, String stream, int expected, int warmup, boolean threadPerTask) throws InterruptedException {
        RStream<String, String> s = client.getStream(stream, StringCodec.INSTANCE);
        StreamReadGroupArgs args = StreamReadGroupArgs.neverDelivered().count(100).timeout(java.time.Duration.ofSeconds(1));
        long[] micros = new long[expected];
        java.util.concurrent.CountDownLatch taken = new java.util.concurrent.CountDownLatch(expected);
        int done = 0;
        while (done < expected) {
            Map<StreamMessageId, Map<String, String>> got = s.readGroup(GROUP, "baseline", args);
            if (got == null || got.isEmpty()) {
                continue;
            }
            long now = BenchWorker.nowMicros();
            for (Map<String, String> fields : got.values()) {
                if (done < expected) {
                    int index = done++;
                    long submitted = Long.parseLong(fields.get("t"));
                    if (threadPerTask) {
                        // the design's hand-off: the time is taken where the task's own virtual thread starts
                        Thread.ofVirtual().start(() -> {
                            micros[index] = BenchWorker.nowMicros() - submitted;
                            taken.countDown();
                        });
                    } else {
                        micros[index] = now - submitted;
                        taken.countDown();
                    }
                }
            }
            s.ackAsync(GROUP, got.keySet().toArray(StreamMessageId[]::new));
        }
        taken.await();
        long[] measured = java.util.Arrays.copyOfRange(micros, warmup, expected);
        java.util.Arrays.sort(measured);
        System.out.printf("latency %d %d %d %d%n", measured[(int) Math.ceil(0.5 * measured.length) - 1],
                measured[(int) Math.ceil(0.99 * measured.length) - 1], measured[(int) Math.ceil(0.999 * measured.length) - 1],
                measured[measured.length - 1]);
        System.out.flush();
    }

    /**
     * Arguments: redis URL, stream, expected entries, {@code xdel}, {@code ack} or {@code fenced},
     * each optionally with {@code -vthread} (a virtual thread per entry) and {@code -fresh} (drain), or
     * {@code latency} or {@code latency-vthread} (the time taken on a virtual thread per entry) and the
     * warm-up entries ({@link #latency}; warmed by a drain first).
     */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        String stream = args[1];
        int expected = Integer.parseInt(args[2]);
        if (args[3].startsWith("latency")) {
            RedissonClient client = Redisson.create(redissonConfig(url));
            try {
                String warm = stream + "-warmup";
                createGroup(client, warm);
                xadd(client, warm, "warmup", WARMUP);
                drain(client, warm, "baseline-warmup", WARMUP, Ack.ACK, () -> { });
                client.getKeys().delete(warm);
                createGroup(client, stream);
                System.out.println("ready");
                latency(client, stream, expected, Integer.parseInt(args[4]), args[3].equals("latency-vthread"));
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            } finally {
                client.shutdown(0, 2, TimeUnit.SECONDS);
            }
            return;
        }
        boolean fresh = args[3].endsWith("-fresh");
        boolean threadPerTask = args[3].contains("-vthread");
        Ack ackMode = Ack.valueOf(args[3].replace("-fresh", "").replace("-vthread", "").toUpperCase(java.util.Locale.ROOT));
        RedissonClient client = Redisson.create(redissonConfig(url));
        try {
            if (!fresh) {
                String warm = stream + "-warmup";
                createGroup(client, warm);
                xadd(client, warm, "warmup", WARMUP);
                drain(client, warm, "baseline-warmup", WARMUP, ackMode, threadPerTask, () -> { });
                client.getKeys().delete(warm);
            }
            System.out.println("ready");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (!"go".equals(in.readLine())) {
                return;
            }
            long[] times = drain(client, stream, "baseline", expected, ackMode, threadPerTask, () -> { });
            System.out.println("first-start " + times[0]);
            System.out.println("done " + times[1]);
            System.out.flush();
            in.readLine(); // the bench closes standard input (or kills this JVM) when it has read the figures
        } finally {
            client.shutdown(0, 2, TimeUnit.SECONDS);
        }
    }
}
