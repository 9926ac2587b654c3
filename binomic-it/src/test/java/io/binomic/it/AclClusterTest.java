package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.BatchHandle;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The documented ACL rule sets on a Redis Cluster, created on every node as redis.md says: a
 * worker, a producer and a reader connected as those users run, submit and read jobs and a batch
 * whose jobs sit on queues in different slots.
 */
class AclClusterTest {
    private static final RedisClusterSet CLUSTER = RedisClusterSet.shared();
    private final String first = "acl-cluster-a-" + UUID.randomUUID().toString().substring(0, 8);
    private final String second = "acl-cluster-b-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeAll
    static void createUsersOnEveryNode() {
        for (RedisClusterSet.Node node : CLUSTER.nodes()) {
            for (String line : AclRedis.rules()) {
                List<String> words = new ArrayList<>(Arrays.asList(line.strip().split("\\s+")));
                words.add(">" + AclRedis.PASSWORD);
                CLUSTER.call(node, words.toArray(String[]::new));
            }
        }
    }

    private static String url(String user) {
        return CLUSTER.url().replace("redis+cluster://", "redis+cluster://" + user + ":" + AclRedis.PASSWORD + "@");
    }

    private BinomicConfig config(String user) {
        return BinomicConfig.builder().brokerUrl(url(user)).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(first, second).pollTimeout(Duration.ofMillis(200)).build()).build();
    }

    @Test
    void aWorkerAProducerAndAReaderOfTheRuleSetsWorkOnACluster() throws Exception {
        Task<String, String> echo = Task.builder("echo", String.class, String.class).queue(first).build();
        Task<String, Void> audit = Task.builder("audit", String.class).queue(second).build();
        Task<String, Void> done = Task.builder("batch-done", String.class).queue(second).build();
        CountDownLatch callback = new CountDownLatch(1);
        try (Binomic worker = Binomic.builder().config(config(AclRedis.WORKER))
                .handle(echo, s -> "echo " + s).handle(audit, s -> null).handle(done, s -> {
                    callback.countDown();
                    return null;
                }).build().start();
             Binomic producer = Binomic.builder().config(config(AclRedis.PRODUCER)).build().start();
             Binomic reader = Binomic.builder().config(BinomicConfig.builder().brokerUrl(url(AclRedis.READER)).build()).build().start()) {
            worker.startWorker();
            JobHandle<String> job = producer.submit(echo, "m");
            BatchHandle batch = producer.batch().add(echo, "b1").add(audit, "b2").onComplete(done, "all").submit();

            assertEquals("echo m", job.await(Duration.ofSeconds(20)));
            assertTrue(callback.await(20, TimeUnit.SECONDS), "the batch's callback ran");
            BatchStatus status = reader.batch(batch.id()).status().orElseThrow();
            assertEquals(2, status.succeeded(), status.toString());
            assertEquals(0, reader.queueStats(first).ready() + reader.queueStats(second).ready());
        }
    }
}
