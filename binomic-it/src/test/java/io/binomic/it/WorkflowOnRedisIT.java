package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.JobState;
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
import java.util.UUID;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * A workflow end to end on a real Redis with a worker: across two queues, each job reads its
 * dependencies' results; a dead-lettered job skips what depends on it, a handle waiting for a skipped
 * job's result learns it was cancelled, and the replay of the dead letter resumes the workflow.
 */
class WorkflowOnRedisIT {
    record Image(String path) { }

    record Resized(String path, int width) { }

    @Test
    void aWorkflowRunsOnRedisPassesResultsAndAReplayResumesIt() throws Exception {
        String suffix = UUID.randomUUID().toString().substring(0, 8);
        String images = "wf-images-" + suffix;
        String publishing = "wf-publish-" + suffix;
        Task<Image, Resized> resize = Task.builder("resize", Image.class, Resized.class).queue(images).maxAttempts(1).build();
        Task<Image, String> watermark = Task.builder("watermark", Image.class, String.class).queue(images).build();
        Task<Image, String> publish = Task.builder("publish", Image.class, String.class).queue(publishing).build();
        AtomicBoolean broken = new AtomicBoolean(true);
        LinkedBlockingQueue<String> published = new LinkedBlockingQueue<>();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisServer.shared().url())
                .worker(WorkerConfig.builder().queues(images, publishing).pollTimeout(Duration.ofMillis(200))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .schedulePeriodicTasks(false).build();
        try (Binomic binomic = Binomic.builder().config(config)
                .handle(resize, image -> {
                    if (broken.get()) {
                        throw new IllegalStateException("disk full");
                    }
                    return new Resized(image.path() + ".small", 640);
                })
                .handle(watermark, image -> TaskContext.current().dependency("resize", Resized.class).orElseThrow().path() + "+wm")
                .handle(publish, image -> {
                    String done = TaskContext.current().dependency("watermark", String.class).orElseThrow();
                    published.add(done);
                    return done;
                })
                .build().start()) {
            binomic.startWorker();
            Image image = new Image("cat.png");
            WorkflowHandle handle = binomic.submit(Workflow.builder().then("resize", resize, image).then("watermark", watermark, image)
                    .then("publish", publish, image).build());
            UUID publishId = handle.status().orElseThrow().node("publish").orElseThrow().jobId();
            var result = binomic.job(publish, publishId).result();

            WorkflowStatus failed = await(binomic, handle.id(), s -> s.state() == WorkflowStatus.State.FAILED);
            assertEquals(List.of(NodeState.DEAD_LETTERED, NodeState.SKIPPED, NodeState.SKIPPED),
                    failed.nodes().stream().map(WorkflowStatus.Node::state).toList());
            assertEquals(JobState.CANCELLED, binomic.job(publish, publishId).status().state());
            var skipped = org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> result.get(10, TimeUnit.SECONDS));
            assertTrue(skipped.getCause() instanceof io.binomic.api.JobCancelledException, skipped.toString());

            broken.set(false);
            String letter = binomic.deadLetters().list(images, DeadLetterFilter.all(), 10).getFirst().id();
            assertTrue(binomic.deadLetters().replayOne(images, letter));
            assertEquals("cat.png.small+wm", published.poll(20, TimeUnit.SECONDS));
            WorkflowStatus done = await(binomic, handle.id(), s -> s.state() == WorkflowStatus.State.SUCCEEDED);
            assertEquals(List.of(NodeState.SUCCEEDED, NodeState.SUCCEEDED, NodeState.SUCCEEDED),
                    done.nodes().stream().map(WorkflowStatus.Node::state).toList());
            assertEquals("cat.png.small+wm", binomic.job(publish, publishId).result().get(10, TimeUnit.SECONDS));
            assertEquals(null, published.poll(300, TimeUnit.MILLISECONDS), "publish ran once");
        }
    }

    private static WorkflowStatus await(Binomic binomic, UUID id, Predicate<WorkflowStatus> done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            WorkflowStatus s = binomic.workflow(id).status().orElseThrow();
            if (done.test(s)) {
                return s;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("workflow " + id + " did not reach the state awaited: " + binomic.workflow(id).status());
    }
}
