package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Found by an outside tester on Redis 7.0: a queue idle for ten lease timeouts showed 0 consumers
 * while its workers ran, because a worker blocked in XREADGROUP on an empty stream does not refresh
 * its consumer's idle time there, and the other workers removed it as idle.
 */
class IdleConsumersRedisIT {
    private static final Duration LEASE = Duration.ofMillis(300); // consumers silent for 3 s are removed

    private final String queue = "idle-" + UUID.randomUUID().toString().substring(0, 8);
    private final Task<String, String> echo = Task.builder("echo", String.class, String.class).queue(queue).build();
    private final List<Binomic> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
    }

    private Binomic worker() {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisServer.shared().url())
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(100)).leaseTimeout(LEASE)
                        .reclaimInterval(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        Binomic binomic = Binomic.builder().config(config).handle(echo, s -> s).build().start();
        opened.add(binomic);
        binomic.startWorker();
        return binomic;
    }

    @Test
    void liveWorkersWaitingOnAnEmptyQueueKeepTheirConsumersAndADeadOnesGoes() throws Exception {
        Binomic one = worker();
        worker();
        String stream = "binomic:{" + queue + "}:stream";
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (one.queueStats(queue).consumers() < 2 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(2, one.queueStats(queue).consumers(), "both workers registered");
        RedisServer.shared().call("XGROUP", "CREATECONSUMER", stream, "binomic", "died-long-ago");
        assertEquals(3, one.queueStats(queue).consumers());

        long end = System.nanoTime() + LEASE.multipliedBy(10 * 2).toNanos();
        int least = Integer.MAX_VALUE;
        while (System.nanoTime() < end) {
            least = Math.min(least, one.queueStats(queue).consumers());
            Thread.sleep(100);
        }

        assertEquals(2, one.queueStats(queue).consumers(), "the dead consumer is removed, the live ones stay: "
                + RedisServer.shared().call("XINFO", "CONSUMERS", stream, "binomic"));
        assertEquals(2, least, "the live workers' consumers were never removed");
    }

    /**
     * A worker that stops cleanly leaves its queue's consumers at once on Redis too, long before the idle cleanup
     * would; the group stays, so the CLI still knows the queue.
     */
    @Test
    void aWorkerThatStopsCleanlyLeavesItsConsumersAndTheGroupStays() throws Exception {
        Binomic one = worker();
        String stream = "binomic:{" + queue + "}:stream";
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (one.queueStats(queue).consumers() < 1 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(1, one.queueStats(queue).consumers(), "the worker registered");

        one.workers().getFirst().stop(Duration.ofSeconds(2));

        assertEquals(0, one.queueStats(queue).consumers(), "" + RedisServer.shared().call("XINFO", "CONSUMERS", stream, "binomic"));
        assertEquals(1, ((List<?>) RedisServer.shared().call("XINFO", "GROUPS", stream)).size(), "the group stays");
    }
}
