package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.FlowCounts;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewBatch;
import io.binomic.api.spi.NewWorkflow;
import io.binomic.api.spi.Workflows;
import io.binomic.core.internal.memory.MemoryBroker;
import io.binomic.core.internal.memory.MemoryScheduler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A broker read a handler makes through its {@code TaskContext} (its dependencies' results, its
 * batch's status) that the broker does not answer is the broker's failure, not the job's: a handler
 * it ends is put back with its attempt unchanged, so a job on its last attempt is not dead-lettered
 * by an outage, and its workflow does not fail. A handler that catches that failure and fails its own
 * way has spent its attempt. Here the broker's reads fail, for handlers only, as a Redis that is down.
 */
class HandlerReadOutageTest {
    record Item(String name) { }

    private static final String QUEUE = "reads";

    private final MemoryBroker memory = new MemoryBroker(BrokerConfig.defaults());
    /** How many more reads made from a handler fail. */
    private final AtomicInteger failingReads = new AtomicInteger();
    private final AtomicInteger readsFailed = new AtomicInteger();
    private final Broker readsFailInHandlers = new ForwardingBroker(memory) {
        @Override
        public <T> Optional<T> capability(Class<T> type) {
            if (type == Workflows.class) {
                return Optional.of(type.cast(new FailingWorkflows(memory.capability(Workflows.class).orElseThrow())));
            }
            if (type == Batches.class) {
                return Optional.of(type.cast(new FailingBatches(memory.capability(Batches.class).orElseThrow())));
            }
            return super.capability(type);
        }
    };
    /** Each handler run: its job's name and attempt. */
    private final Queue<String> runs = new ConcurrentLinkedQueue<>();
    private Binomic binomic;

    @AfterEach
    void close() {
        if (binomic != null) {
            binomic.close();
        }
    }

    /** Throws as a Redis that is down does, for a read made from a handler while {@code failingReads} lasts. */
    private void outage(UUID id) {
        if (TaskContext.find().isPresent() && failingReads.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            readsFailed.incrementAndGet();
            throw new BrokerException("Redis read " + id + " failed at 127.0.0.1:6379: Connection refused");
        }
    }

    private final class FailingWorkflows implements Workflows {
        private final Workflows delegate;

        FailingWorkflows(Workflows delegate) { this.delegate = delegate; }

        @Override
        public void submitWorkflow(NewWorkflow workflow) { delegate.submitWorkflow(workflow); }

        @Override
        public Map<UUID, String> cancelWorkflow(UUID id) { return delegate.cancelWorkflow(id); }

        @Override
        public Optional<WorkflowStatus> readWorkflow(UUID id) {
            outage(id);
            return delegate.readWorkflow(id);
        }

        @Override
        public FlowCounts counts() { return delegate.counts(); }
    }

    private final class FailingBatches implements Batches {
        private final Batches delegate;

        FailingBatches(Batches delegate) { this.delegate = delegate; }

        @Override
        public void submitBatch(NewBatch batch, List<Message> jobs) { delegate.submitBatch(batch, jobs); }

        @Override
        public boolean addToBatch(UUID id, List<Message> jobs) { return delegate.addToBatch(id, jobs); }

        @Override
        public boolean closeBatch(UUID id) { return delegate.closeBatch(id); }

        @Override
        public Map<UUID, String> cancelBatch(UUID id) { return delegate.cancelBatch(id); }

        @Override
        public Optional<BatchStatus> readBatch(UUID id) {
            outage(id);
            return delegate.readBatch(id);
        }

        @Override
        public FlowCounts counts() { return delegate.counts(); }
    }

    private static final Task<Item, String> RESIZE = Task.builder("resize", Item.class, String.class).queue(QUEUE)
            .keepStatusFor(Duration.ofMinutes(5)).build();
    /** On its last attempt from its first: a failure it counts is a dead letter. */
    private static final Task<Item, String> WATERMARK = Task.builder("watermark", Item.class, String.class).queue(QUEUE).maxAttempts(1)
            .keepStatusFor(Duration.ofMinutes(5)).build();
    private static final Task<Item, Void> CHILD = Task.builder("child", Item.class).queue(QUEUE).maxAttempts(1)
            .keepStatusFor(Duration.ofMinutes(5)).build();

    private BinomicConfig config() {
        return BinomicConfig.builder()
                .worker(WorkerConfig.builder().queues(QUEUE).pollTimeout(Duration.ofMillis(50)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
    }

    /** A worker whose {@code watermark} handler reads its dependency {@code resize} as {@code watermark} says. */
    private void start(io.binomic.api.TaskHandler<Item, String> watermark) {
        binomic = Binomic.builder().config(config()).broker(readsFailInHandlers).scheduler(new MemoryScheduler(memory))
                .handle(RESIZE, item -> {
                    runs.add("resize " + TaskContext.current().attempt());
                    return item.name() + ".small";
                })
                .handle(WATERMARK, watermark)
                .handle(CHILD, item -> {
                    runs.add("child " + TaskContext.current().attempt());
                    BatchStatus batch = TaskContext.current().batch().orElseThrow();
                    runs.add("child saw " + batch.state());
                    return null;
                })
                .build().start();
        binomic.startWorker();
    }

    private WorkflowStatus awaitEnd(WorkflowHandle handle) throws InterruptedException {
        WorkerTest.await("the workflow ended", () -> handle.status().map(s -> s.state() != WorkflowStatus.State.RUNNING).orElse(false));
        return handle.status().orElseThrow();
    }

    private WorkflowHandle submitWorkflow() {
        Item image = new Item("cat.png");
        return binomic.submit(Workflow.builder().then("resize", RESIZE, image).then("watermark", WATERMARK, image).build());
    }

    @Test
    void aJobOnItsLastAttemptWhoseDependencyReadFailsRunsAgainAsTheSameAttemptAndItsWorkflowSucceeds() throws Exception {
        start(item -> {
            runs.add("watermark " + TaskContext.current().attempt());
            return TaskContext.current().dependency("resize", String.class).orElseThrow() + "+wm";
        });
        failingReads.set(2); // two runs of watermark see the outage

        WorkflowHandle handle = submitWorkflow();
        WorkflowStatus status = awaitEnd(handle);

        assertEquals(WorkflowStatus.State.SUCCEEDED, status.state(), status + "; runs " + runs);
        assertEquals(List.of("resize 1", "watermark 1", "watermark 1", "watermark 1"), List.copyOf(runs));
        assertEquals(2, readsFailed.get());
        UUID watermarkId = status.node("watermark").orElseThrow().jobId();
        assertEquals("cat.png.small+wm", binomic.job(WATERMARK, watermarkId).result().get());
        assertEquals(1, binomic.job(WATERMARK, watermarkId).status().attempt());
        assertEquals(0, binomic.queueStats(QUEUE).deadLetters());
    }

    @Test
    void aHandlerThatCatchesTheReadsFailureAndFailsItsOwnWaySpendsItsAttempt() throws Exception {
        start(item -> {
            runs.add("watermark " + TaskContext.current().attempt());
            try {
                return TaskContext.current().dependency("resize", String.class).orElseThrow();
            } catch (BrokerException e) {
                throw new IllegalStateException("no input: " + e.getMessage(), e);
            }
        });
        failingReads.set(1);

        WorkflowStatus status = awaitEnd(submitWorkflow());

        assertEquals(WorkflowStatus.State.FAILED, status.state(), status.toString());
        assertEquals(List.of("resize 1", "watermark 1"), List.copyOf(runs));
        DeadLetter letter = binomic.deadLetters().list(QUEUE, DeadLetterFilter.all(), 10).getFirst();
        assertEquals(DeadLetterReason.MAX_ATTEMPTS, letter.failure().reason());
        assertEquals(IllegalStateException.class.getName(), letter.failure().errorClass());
    }

    @Test
    void aBatchJobOnItsLastAttemptWhoseBatchReadFailsRunsAgainAsTheSameAttempt() throws Exception {
        start(item -> null);
        failingReads.set(1);

        BatchHandle batch = binomic.batch().add(CHILD, new Item("one")).submit();
        WorkerTest.await("the batch ended", () -> batch.status().map(s -> s.state() != BatchStatus.State.RUNNING).orElse(false));

        BatchStatus status = batch.status().orElseThrow();
        assertEquals(BatchStatus.State.SUCCEEDED, status.state(), status + "; runs " + runs);
        assertEquals(List.of("child 1", "child 1", "child saw RUNNING"), List.copyOf(runs));
    }

    @Test
    void readsTheBrokerRefusesEveryTimeEndAsAFailedAttemptAfterBoundedTries() throws Exception {
        AtomicInteger watermarkRuns = new AtomicInteger();
        start(item -> {
            watermarkRuns.incrementAndGet();
            return TaskContext.current().dependency("resize", String.class).orElseThrow();
        });
        failingReads.set(Integer.MAX_VALUE); // a permission the worker's user lacks: the broker answers all but the reads

        WorkflowHandle handle = submitWorkflow();
        // twenty put-backs half a second apart: ten seconds on an idle machine, more beside a busy one
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (handle.status().orElseThrow().state() == WorkflowStatus.State.RUNNING) {
            assertTrue(System.nanoTime() < deadline, "not ended after " + watermarkRuns.get() + " runs");
            Thread.sleep(50);
        }
        assertEquals(WorkflowStatus.State.FAILED, handle.status().orElseThrow().state());
        DeadLetter letter = binomic.deadLetters().list(QUEUE, DeadLetterFilter.all(), 10).getFirst();
        assertEquals(DeadLetterReason.MAX_ATTEMPTS, letter.failure().reason());
        assertEquals(BrokerException.class.getName(), letter.failure().errorClass());
        assertEquals(20, watermarkRuns.get(), "the runs before the attempt failed");
    }
}
