package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Workflows;
import io.binomic.core.internal.memory.MemoryBroker;
import io.binomic.core.internal.memory.MemoryScheduler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A batch or workflow cancel is two steps: one marks the flow and its unfinished jobs, then each job
 * is cancelled. A job whose handler ran at the mark and returned before its own cancel was answered
 * ALREADY_ENDED, and the flow's cancel said CANCELLED ("nothing more of it will run") for a batch
 * whose every job then succeeded and which ran onSuccess. Here the handler returns, and its
 * settlement lands, exactly between the two steps.
 */
class FlowCancelOutcomeRaceTest {
    record Item(String name) { }

    private static final Task<Item, Void> WORK = Task.builder("work", Item.class).queue("race").build();

    private final MemoryBroker memory = new MemoryBroker(BrokerConfig.defaults());
    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicReference<UUID> running = new AtomicReference<>();
    private Binomic binomic;

    /**
     * The memory broker, whose batch and workflow cancel steps let the running handler return and wait for its
     * settlement before they answer, so that the job cancels that follow find the job ended.
     */
    private final Broker settlesBetweenMarkAndJobCancels = new ForwardingBroker(memory) {
        @Override
        public <T> Optional<T> capability(Class<T> type) {
            if (type != Batches.class && type != Workflows.class) {
                return super.capability(type);
            }
            Object target = memory.capability(type).orElseThrow();
            return Optional.of(type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, (proxy, method, args) -> {
                Object reply;
                try {
                    reply = method.invoke(target, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
                if (method.getName().equals("cancelBatch") || method.getName().equals("cancelWorkflow")) {
                    release.countDown();
                    WorkerTest.await("the job settled", () -> binomic.job("race", running.get()).status().state().isFinal());
                }
                return reply;
            })));
        }
    };

    @AfterEach
    void close() {
        if (binomic != null) {
            binomic.close();
        }
    }

    private void startWorker() throws InterruptedException {
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().queues("race").pollTimeout(Duration.ofMillis(50)).build()).build();
        binomic = Binomic.builder().config(config).broker(settlesBetweenMarkAndJobCancels).scheduler(new MemoryScheduler(memory))
                .handle(WORK, item -> {
                    running.set(TaskContext.current().messageId());
                    entered.countDown();
                    release.await(); // a handler that does not look at the interrupt, which comes only with the job cancel
                    return null;
                })
                .build().start();
        binomic.startWorker();
    }

    @Test
    void aBatchCancelWhoseRunningJobReturnsBeforeItsJobCancelSaysCancelRequestedNotCancelled() throws Exception {
        startWorker();
        BatchHandle batch = binomic.batch().add(WORK, new Item("one")).submit();
        assertTrue(entered.await(10, TimeUnit.SECONDS), "the handler never ran");

        JobHandle.CancelOutcome outcome = batch.cancel();

        BatchStatus status = batch.status().orElseThrow();
        assertEquals(BatchStatus.State.SUCCEEDED, status.state(), status.toString());
        assertTrue(status.cancelRequested(), status.toString());
        assertEquals(JobState.SUCCEEDED, binomic.job("race", running.get()).status().state());
        assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, outcome,
                "its job ran at the cancel and succeeded: the cancel stopped nothing, so it must not say CANCELLED");
    }

    @Test
    void aWorkflowCancelWhoseRunningJobReturnsBeforeItsJobCancelSaysCancelRequestedNotCancelled() throws Exception {
        startWorker();
        WorkflowHandle workflow = binomic.submit(Workflow.builder().add("last", WORK, new Item("one")).build());
        assertTrue(entered.await(10, TimeUnit.SECONDS), "the handler never ran");

        JobHandle.CancelOutcome outcome = workflow.cancel();

        WorkflowStatus status = workflow.status().orElseThrow();
        assertEquals(WorkflowStatus.NodeState.SUCCEEDED, status.node("last").orElseThrow().state(), status.toString());
        assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, outcome,
                "its job ran at the cancel and succeeded: the cancel stopped nothing, so it must not say CANCELLED");
    }
}
