package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.DeadLetterFilter;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.WorkflowStatus.NodeState;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;

/**
 * Workflows end to end on the memory broker, with a worker: the examples of {@link Workflow} and
 * workflows.md are regions of this file.
 */
class WorkflowSnippetsTest {
    record Image(String path) { }

    record Resized(String path, int width) { }

    static final Task<Image, Resized> resize = Task.builder("resize", Image.class, Resized.class).queue("images").build();
    static final Task<Image, String> watermark = Task.builder("watermark", Image.class, String.class).queue("images").build();
    static final Task<Image, String> thumbnail = Task.builder("thumbnail", Image.class, String.class).queue("thumbs").build();
    static final Task<Image, Void> publish = Task.builder("publish", Image.class).queue("publish").build();

    @Test
    void aDiamondRunsEachJobOnceAfterItsDependenciesAndPassesTheirResults() throws Exception {
        LinkedBlockingQueue<String> published = new LinkedBlockingQueue<>();
        AtomicInteger publishes = new AtomicInteger();
        try (Binomic binomic = Binomic.builder()
                .handle(resize, image -> new Resized(image.path() + ".small", 640))
                .handle(watermark, image -> {
                    Resized resized = TaskContext.current().dependency("resize", Resized.class).orElseThrow();
                    return resized.path() + "+wm";
                })
                .handle(thumbnail, image -> TaskContext.current().dependency("resize", Resized.class).orElseThrow().width() + "px")
                .handle(publish, image -> {
                    publishes.incrementAndGet();
                    TaskContext cx = TaskContext.current();
                    published.add(cx.dependency("watermark", String.class).orElseThrow() + " " + cx.dependency("thumbnail", String.class)
                            .orElseThrow());
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            Image image = new Image("cat.png");
            // @start region="diamond"
            Workflow workflow = Workflow.builder()
                    .add("resize", resize, image)
                    .add("watermark", watermark, image, Workflow.dependsOn("resize"))
                    .add("thumbnail", thumbnail, image, Workflow.dependsOn("resize"))   // another queue, same workflow
                    .add("publish", publish, image, Workflow.dependsOn("watermark", "thumbnail"))
                    .build();
            WorkflowHandle handle = binomic.submit(workflow);             // roots enqueued, the rest held, atomically
            Optional<WorkflowStatus> status = binomic.workflow(handle.id()).status();   // from any process, by id
            // in watermark's handler: TaskContext.current().dependency("resize", Resized.class)
            // @end
            assertTrue(status.isPresent());
            assertEquals("cat.png.small+wm 640px", published.poll(10, TimeUnit.SECONDS));
            WorkflowStatus done = await(binomic, handle.id(), s -> s.state() != WorkflowStatus.State.RUNNING);
            assertEquals(WorkflowStatus.State.SUCCEEDED, done.state());
            assertEquals(1, publishes.get());
            assertEquals(List.of("resize", "watermark", "thumbnail", "publish"), done.nodes().stream().map(WorkflowStatus.Node::name).toList());
        }
    }

    @Test
    void aChainRunsItsStepsInOrder() throws Exception {
        LinkedBlockingQueue<String> order = new LinkedBlockingQueue<>();
        Task<String, Void> step = Task.builder("step", String.class).queue("steps").build();
        try (Binomic binomic = Binomic.builder().handle(step, s -> {
            order.add(s);
            return null;
        }).build().start()) {
            binomic.startWorker();
            // @start region="chain"
            WorkflowHandle chain = binomic.submit(Workflow.builder().then("a", step, "a").then("b", step, "b").then("c", step, "c").build());
            // @end
            await(binomic, chain.id(), s -> s.state() == WorkflowStatus.State.SUCCEEDED);
            assertEquals(List.of("a", "b", "c"), List.of(order.poll(), order.poll(), order.poll()));
        }
    }

    @Test
    void aFailureSkipsItsDependentsAReplayResumesThemAndRunAnywayRuns() throws Exception {
        AtomicBoolean broken = new AtomicBoolean(true);
        LinkedBlockingQueue<String> seen = new LinkedBlockingQueue<>();
        Task<Image, Resized> fragile = Task.builder("fragile-resize", Image.class, Resized.class).queue("images").maxAttempts(1).build();
        Task<Image, Void> report = Task.builder("report", Image.class).queue("reports").build();
        try (Binomic binomic = Binomic.builder()
                .handle(fragile, image -> {
                    if (broken.get()) {
                        throw new IllegalStateException("disk full");
                    }
                    return new Resized(image.path(), 100);
                })
                .handle(watermark, image -> "wm")
                .handle(publish, image -> {
                    seen.add("published");
                    return null;
                })
                .handle(report, image -> {
                    seen.add("report saw " + TaskContext.current().dependency("publish", Void.class).isPresent());
                    IllegalArgumentException wrong = assertThrows(IllegalArgumentException.class,
                            () -> TaskContext.current().dependency("nope", String.class));
                    seen.add(wrong.getMessage());
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            Image image = new Image("dog.png");
            // @start region="failure"
            Workflow workflow = Workflow.builder()
                    .add("resize", fragile, image)
                    .add("watermark", watermark, image, Workflow.dependsOn("resize"))        // skipped if resize fails
                    .add("publish", publish, image, Workflow.dependsOn("watermark"))         // and so is this one
                    .add("report", report, image, Workflow.dependsOn("publish")
                            .whenDependencyFails(Workflow.DependencyFailure.RUN_ANYWAY))      // runs whatever happened
                    .build();
            // @end
            WorkflowHandle handle = binomic.submit(workflow);
            assertEquals("report saw false", seen.poll(10, TimeUnit.SECONDS));
            assertEquals("job 'report' of workflow " + handle.id() + " has no dependency 'nope'; it depends on [publish]",
                    seen.poll(10, TimeUnit.SECONDS));
            WorkflowStatus failed = await(binomic, handle.id(), s -> s.state() == WorkflowStatus.State.FAILED);
            assertEquals(List.of(NodeState.DEAD_LETTERED, NodeState.SKIPPED, NodeState.SKIPPED, NodeState.SUCCEEDED),
                    failed.nodes().stream().map(WorkflowStatus.Node::state).toList());
            UUID publishId = failed.node("publish").orElseThrow().jobId();
            assertEquals(JobState.CANCELLED, binomic.job("publish", publishId).status().state());

            broken.set(false);
            String letter = binomic.deadLetters().list("images", DeadLetterFilter.all(), 10).getFirst().id();
            assertTrue(binomic.deadLetters().replayOne("images", letter));
            assertEquals("published", seen.poll(10, TimeUnit.SECONDS), "the replay resumed the workflow");
            WorkflowStatus resumed = await(binomic, handle.id(), s -> s.state() == WorkflowStatus.State.SUCCEEDED);
            assertEquals(NodeState.SUCCEEDED, resumed.node("publish").orElseThrow().state());
            assertEquals(null, seen.poll(200, TimeUnit.MILLISECONDS), "report ran once, before the replay");
        }
    }

    @Test
    void aCancelledWorkflowInterruptsItsRunningJobAndNeverRunsItsHeldOnes() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicInteger published = new AtomicInteger();
        Task<Image, Resized> slow = Task.builder("slow-resize", Image.class, Resized.class).queue("images").build();
        try (Binomic binomic = Binomic.builder()
                .handle(slow, image -> {
                    running.countDown();
                    try {
                        Thread.sleep(30_000);
                    } catch (InterruptedException e) {
                        interrupted.set(true);
                        throw e;
                    }
                    return null;
                })
                .handle(publish, image -> {
                    published.incrementAndGet();
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            Image image = new Image("x.png");
            WorkflowHandle handle = binomic.submit(Workflow.builder().then("resize", slow, image).then("publish", publish, image).build());
            assertTrue(running.await(10, TimeUnit.SECONDS));
            assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, handle.cancel(), "resize was running: its worker interrupts it");
            WorkflowStatus s = await(binomic, handle.id(), st -> st.state() == WorkflowStatus.State.CANCELLED);
            assertTrue(interrupted.get());
            assertEquals(List.of(NodeState.CANCELLED, NodeState.CANCELLED), s.nodes().stream().map(WorkflowStatus.Node::state).toList());
            assertEquals(0, published.get());
            assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, handle.cancel(), "an ended workflow: nothing to cancel");
            assertEquals(JobHandle.CancelOutcome.NOT_FOUND, binomic.workflow(UUID.randomUUID()).cancel(),
                    "an unknown workflow: no status, nothing to cancel, and no exception");
        }
    }

    /** A job that ignores its interrupt (CPU-bound code does) changes nothing by a second cancel; the workflow counts once. */
    @Test
    void aSecondCancelWhileAJobStillRunsChangesNothingAndTheWorkflowIsCountedCancelledOnce() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Task<Image, Void> stubborn = Task.builder("stubborn-resize", Image.class).queue("images").build();
        try (Binomic binomic = Binomic.builder()
                .handle(stubborn, image -> {
                    running.countDown();
                    while (!release.await(10, TimeUnit.MILLISECONDS) || Thread.interrupted()) {
                        Thread.interrupted(); // ignores the interrupt, as a busy loop does
                    }
                    return null;
                })
                .handle(publish, image -> null)
                .build().start()) {
            binomic.startWorker();
            Image image = new Image("x.png");
            WorkflowHandle handle = binomic.submit(Workflow.builder().then("resize", stubborn, image).then("publish", publish, image)
                    .build());
            assertTrue(running.await(10, TimeUnit.SECONDS));
            assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, handle.cancel());
            assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, handle.cancel(), "asked already: a repeat changes nothing");
            assertEquals(1, binomic.flowCounters().workflowsCancelled(), "one workflow cancelled, however many calls asked");
            release.countDown();
            await(binomic, handle.id(), st -> st.state() == WorkflowStatus.State.CANCELLED);
            assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, handle.cancel());
            assertEquals(1, binomic.flowCounters().workflowsCancelled());
        }
    }

    @Test
    void aJobWithADelayIsDueThatLongAfterItsDependenciesSucceededAndARootTakesOptions() throws Exception {
        Task<String, Void> fetch = Task.builder("fetch", String.class).queue("steps").build();
        Task<String, Void> remind = Task.builder("remind", String.class).queue("steps").delay(Duration.ofMillis(700)).build();
        Map<String, Long> ranAt = new ConcurrentHashMap<>();
        try (Binomic binomic = Binomic.builder()
                .handle(fetch, s -> {
                    ranAt.put(s, System.nanoTime());
                    return null;
                })
                .handle(remind, s -> {
                    ranAt.put(s, System.nanoTime());
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            // @start region="options"
            Workflow workflow = Workflow.builder()
                    .add("fetch", fetch, "a", SubmitOptions.builder().priority(8).build())   // a root with options
                    .add("remind", remind, "b", Workflow.dependsOn("fetch"))                // its task's delay: due 700 ms after fetch succeeded
                    .add("follow-up", fetch, "c", SubmitOptions.builder().delay(Duration.ofMillis(500)).build(),
                            Workflow.dependsOn("remind"))                                   // due 500 ms after remind succeeded
                    .build();
            // @end
            WorkflowHandle handle = binomic.submit(workflow);
            WorkflowStatus done = await(binomic, handle.id(), st -> st.state() != WorkflowStatus.State.RUNNING);
            assertEquals(WorkflowStatus.State.SUCCEEDED, done.state());
            // due times are whole milliseconds: a job due at a millisecond can start up to one before the nanosecond mark
            long grain = Duration.ofMillis(1).toNanos();
            assertTrue(ranAt.get("b") - ranAt.get("a") >= Duration.ofMillis(700).toNanos() - grain,
                    "remind ran " + Duration.ofNanos(ranAt.get("b") - ranAt.get("a")) + " after fetch, before its delay");
            assertTrue(ranAt.get("c") - ranAt.get("b") >= Duration.ofMillis(500).toNanos() - grain,
                    "follow-up ran " + Duration.ofNanos(ranAt.get("c") - ranAt.get("b")) + " after remind, before its delay");
        }
    }

    @Test
    void theTestModeRunsAWorkflowInsideItsSubmit() {
        try (io.binomic.core.testing.TestMode test = io.binomic.core.testing.TestMode.inline()
                .handle(resize, image -> new Resized(image.path() + ".small", 640))
                .handle(watermark, image -> TaskContext.current().dependency("resize", Resized.class).orElseThrow().path() + "+wm")
                .start()) {
            Image image = new Image("t.png");
            WorkflowHandle handle = test.binomic().submit(Workflow.builder().then("resize", resize, image)
                    .then("watermark", watermark, image).build());
            WorkflowStatus s = handle.status().orElseThrow();
            assertEquals(WorkflowStatus.State.SUCCEEDED, s.state(), s.toString());
            UUID wm = s.node("watermark").orElseThrow().jobId();
            assertEquals("\"t.png.small+wm\"", test.binomic().job(watermark, wm).status().result().orElseThrow(),
                    "the status keeps the result as JSON");
        }
    }

    @Test
    void aSubmitRefusalNamesTheJobOfTheWorkflow() {
        Task<Void, Void> tick = Task.builder("tick").interval(Duration.ofMinutes(1)).build();
        try (Binomic binomic = Binomic.builder().build().start()) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> binomic.submit(Workflow.builder().add("resize", resize, new Image("a")).then("beat", tick, null).build()));
            assertEquals("workflow job 'beat': task 'tick' is an INTERVAL task: the scheduler fires it, it cannot be submitted;"
                    + " declare a DIRECT task to run it on demand", e.getMessage());
        }
    }

    @Test
    void aBrokerWithoutWorkflowsRefusesOneNamingIt() {
        Workflow one = Workflow.builder().add("resize", resize, new Image("a")).build();
        try (Binomic binomic = Binomic.builder().broker(new ForwardingBroker(new io.binomic.core.internal.memory.MemoryBroker(
                io.binomic.api.BrokerConfig.defaults()))).build().start()) {
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> binomic.submit(one));
            assertTrue(e.getMessage().contains("has no Workflows capability"), e.getMessage());
        }
    }

    private static WorkflowStatus await(Binomic binomic, UUID id, Predicate<WorkflowStatus> done) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            WorkflowStatus s = binomic.workflow(id).status().orElseThrow();
            if (done.test(s)) {
                return s;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("workflow " + id + " did not reach the state awaited: " + binomic.workflow(id).status());
    }
}
