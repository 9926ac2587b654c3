package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.WorkflowStatus.NodeState;
import io.binomic.core.Binomic;
import io.binomic.core.Workflow;
import io.binomic.core.WorkflowHandle;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A job of a workflow on its last attempt ({@code maxAttempts(1)}) reads its dependency's result
 * while Redis is down. The read's failure is Redis's, not the job's: the job is put back with its
 * attempt unchanged, runs again once Redis is back, as the same attempt, and the workflow succeeds.
 * Counted as the handler's failure, it dead-lettered the job, skipped its dependents and failed the
 * workflow, though nothing in it failed.
 */
class WorkflowDependencyReadOutageIT {
    record Image(String path) { }

    record Resized(String path, int width) { }

    private final CapturedCoreLog log = new CapturedCoreLog();
    private RedisServer redis;

    @BeforeEach
    void start() {
        log.attach();
        redis = RedisServer.startNew();
    }

    @AfterEach
    void close() {
        log.detach();
        redis.close();
    }

    @Test
    void aDependencyReadWhileRedisIsDownCostsNoAttemptAndTheWorkflowSucceedsOnceRedisIsBack() throws Exception {
        String images = "wf-read-outage-" + UUID.randomUUID().toString().substring(0, 8);
        Task<Image, Resized> resize = Task.builder("resize", Image.class, Resized.class).queue(images).build();
        Task<Image, String> watermark = Task.builder("watermark", Image.class, String.class).queue(images).maxAttempts(1).build();
        Task<Image, String> publish = Task.builder("publish", Image.class, String.class).queue(images).build();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch redisDown = new CountDownLatch(1);
        CountDownLatch firstRunEnded = new CountDownLatch(1);
        Queue<Integer> watermarkAttempts = new ConcurrentLinkedQueue<>();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(images).pollTimeout(Duration.ofMillis(200))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        try (Binomic binomic = Binomic.builder().config(config)
                .handle(resize, image -> new Resized(image.path() + ".small", 640))
                .handle(watermark, image -> {
                    watermarkAttempts.add(TaskContext.current().attempt());
                    if (watermarkAttempts.size() > 1) {
                        return TaskContext.current().dependency("resize", Resized.class).orElseThrow().path() + "+wm";
                    }
                    entered.countDown();
                    redisDown.await();
                    try {
                        return TaskContext.current().dependency("resize", Resized.class).orElseThrow().path() + "+wm";
                    } finally {
                        firstRunEnded.countDown();
                    }
                })
                .handle(publish, image -> TaskContext.current().dependency("watermark", String.class).orElseThrow() + "+pub")
                .build().start()) {
            binomic.startWorker();
            Image image = new Image("cat.png");
            WorkflowHandle handle = binomic.submit(Workflow.builder().then("resize", resize, image).then("watermark", watermark, image)
                    .then("publish", publish, image).build());

            assertTrue(entered.await(30, TimeUnit.SECONDS), "watermark never ran");
            redis.stop();
            redisDown.countDown(); // its read now meets a Redis that is down
            assertTrue(firstRunEnded.await(60, TimeUnit.SECONDS), "the read never ended; log:\n" + log);
            Thread.sleep(2000); // a while down, the run's outcome held by the worker
            redis.start();

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            WorkflowStatus status = null;
            while (System.nanoTime() < deadline) {
                try {
                    status = handle.status().orElseThrow();
                    if (status.state() != WorkflowStatus.State.RUNNING) {
                        break;
                    }
                } catch (io.binomic.api.BrokerException reconnecting) {
                    // the client's reconnection to the restarted Redis
                }
                Thread.sleep(100);
            }
            assertTrue(status != null && status.state() == WorkflowStatus.State.SUCCEEDED, status + "; log:\n" + log);
            assertEquals(List.of(NodeState.SUCCEEDED, NodeState.SUCCEEDED, NodeState.SUCCEEDED),
                    status.nodes().stream().map(WorkflowStatus.Node::state).toList());
            assertEquals(List.of(1, 1), List.copyOf(watermarkAttempts), "watermark ran again as the same attempt");
            UUID publishId = status.node("publish").orElseThrow().jobId();
            assertEquals("cat.png.small+wm+pub", binomic.job(publish, publishId).result().get(10, TimeUnit.SECONDS));
            assertEquals(0, binomic.queueStats(images).deadLetters(), log.toString());
            assertTrue(log.lines().stream().anyMatch(l -> l.startsWith("WARNING") && l.contains("did not answer a read its handler made")
                    && l.contains("attempt 1 unchanged")), log.toString());
        }
    }
}
