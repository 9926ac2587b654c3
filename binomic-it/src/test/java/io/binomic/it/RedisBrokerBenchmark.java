package io.binomic.it;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Throughput of the Redis broker's raw operations (not a test: run it by hand). Starts its own
 * redis-server, enqueues N small messages with enqueueAll, drains them with fetch + ack, and prints
 * one machine-readable line per phase with messages/s and Redis CPU microseconds per message
 * (from INFO CPU), comparable with the measurements in DESIGN.md section 6.
 *
 * <pre>{@code
 * ./mvnw -q -pl binomic-it test-compile exec:exec -Dexec.executable=java \
 *     -Dexec.args="-cp %classpath io.binomic.it.RedisBrokerBenchmark 200000" -Dexec.classpathScope=test
 * }</pre>
 */
public final class RedisBrokerBenchmark {
    private RedisBrokerBenchmark() { }

    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int batch = args.length > 1 ? Integer.parseInt(args[1]) : 500;
        try (RedisServer redis = RedisServer.startNew(); Broker broker = Brokers.redis(redis)) {
            String queue = "bench";
            broker.start(List.of(queue));
            byte[] payload = "{\"n\":12345,\"name\":\"benchmark\"}".getBytes(StandardCharsets.UTF_8);
            List<Message> messages = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                messages.add(Message.fromWire(UUID.randomUUID(), "bench", queue, 1, Instant.now(), payload, Map.of()));
            }

            double cpu0 = redisCpuSeconds(redis);
            long t0 = System.nanoTime();
            for (int from = 0; from < count; from += 10_000) {
                broker.enqueueAll(messages.subList(from, Math.min(count, from + 10_000)));
            }
            long t1 = System.nanoTime();
            double cpu1 = redisCpuSeconds(redis);
            print("enqueueAll", count, t1 - t0, cpu1 - cpu0);

            int drained = 0;
            while (drained < count) {
                List<Delivery> got = broker.fetch(List.of(queue), "bench-consumer", batch, Duration.ofMillis(100));
                broker.settle("bench-consumer", got.stream().<io.binomic.api.spi.Settlement>map(io.binomic.api.spi.Settlement.Ack::new).toList());
                drained += got.size();
            }
            long t2 = System.nanoTime();
            print("fetch+ack(batch=" + batch + ")", count, t2 - t1, redisCpuSeconds(redis) - cpu1);
        }
    }

    private static void print(String phase, int count, long nanos, double redisCpuSeconds) {
        System.out.printf("BENCH broker=redis phase=%s messages=%d seconds=%.3f msgs_per_s=%.0f redis_cpu_us_per_msg=%.2f%n",
                phase, count, nanos / 1e9, count / (nanos / 1e9), redisCpuSeconds * 1e6 / count);
    }

    private static double redisCpuSeconds(RedisServer redis) {
        double total = 0;
        for (String line : ((String) redis.call("INFO", "CPU")).split("\r\n")) {
            if (line.startsWith("used_cpu_sys:") || line.startsWith("used_cpu_user:")) {
                total += Double.parseDouble(line.substring(line.indexOf(':') + 1));
            }
        }
        return total;
    }
}
