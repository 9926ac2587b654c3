package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.it.TestApp.Job;
import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Sentinel through a {@code redis+sentinel://} URL alone (no Redisson YAML file): a worker and a
 * producer find the primary through the sentinels and, after the primary is SIGKILLed and a replica
 * promoted, carry on against it without a restart.
 */
class SentinelUrlIT {

    @Test
    void aSentinelUrlFindsThePrimaryAndFollowsAFailover() {
        String queue = "sentinel-url-" + UUID.randomUUID().toString().substring(0, 8);
        RedisServer ledgerRedis = RedisServer.shared();
        Ledger ledger = new Ledger(ledgerRedis.host(), ledgerRedis.port(), queue);
        try (RedisSentinelSet sentinels = RedisSentinelSet.start()) {
            String url = "redis+sentinel://" + sentinels.sentinelAddresses().stream().map(a -> a.substring("redis://".length()))
                    .collect(Collectors.joining(",")) + "/" + RedisSentinelSet.MASTER_NAME;
            Task<Job, Void> job = TestApp.job(queue, Duration.ofMillis(100));
            BinomicConfig config = BinomicConfig.builder().brokerUrl(url).schedulePeriodicTasks(false)
                    .worker(WorkerConfig.builder().queues(queue).concurrency(4).leaseTimeout(Duration.ofSeconds(3))
                            .pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(500)).build())
                    .build();
            try (Binomic binomic = Binomic.builder().config(config).handle(job, TestApp.handler(ledger)).build().start()) {
                binomic.startWorker();
                binomic.submitAll(job, IntStream.range(0, 20).mapToObj(n -> new Job(n, 1, 0)).toList());
                Await.until(Duration.ofSeconds(30), () -> ledger.done().size() == 20, () -> "before: " + ledger.done());
                sentinels.awaitReplicasInSync();

                sentinels.failover();
                IntStream.range(20, 40).forEach(n -> binomic.submit(job, new Job(n, 1, 0)));

                Set<Integer> all = IntStream.range(0, 40).boxed().collect(Collectors.toSet());
                Await.until(Duration.ofSeconds(40), () -> ledger.done().equals(all), () -> "after the failover: " + ledger.done());
                assertEquals(all, ledger.done());
            }
        }
    }
}
