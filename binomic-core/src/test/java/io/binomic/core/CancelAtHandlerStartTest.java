package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.spi.RunObserver;
import io.binomic.api.spi.RunObserver.RunOutcome;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A cancel that reaches the worker after it marked the job started but before the handler was
 * called: the handler must never run, and the job ends CANCELLED at once. A run observer's
 * {@code started} is called in exactly that gap, so cancelling from it lands there every time (the
 * memory broker hands the cancel to the worker before {@code cancel()} returns).
 */
class CancelAtHandlerStartTest {
    record Item(String name) { }

    private static final Task<Item, Void> SLOW = Task.builder("slow", Item.class).queue("gap").build();
    private static final Task<Item, Void> TRACKED = Task.builder("tracked", Item.class).queue("gap")
            .keepStatusFor(Duration.ofMinutes(5)).build();

    private final CountDownLatch release = new CountDownLatch(1);
    private final AtomicInteger handlerCalls = new AtomicInteger();
    private final List<RunOutcome> outcomes = new CopyOnWriteArrayList<>();
    private Binomic binomic;

    @AfterEach
    void close() {
        release.countDown();
        if (binomic != null) {
            binomic.close();
        }
    }

    private void start(RunObserver cancelling) {
        binomic = Binomic.builder()
                .handle(SLOW, this::hold)
                .handle(TRACKED, this::hold)
                .build().start();
        binomic.addRunObserver(cancelling);
        binomic.startWorker();
    }

    private Void hold(Item item) throws InterruptedException {
        handlerCalls.incrementAndGet();
        release.await(30, TimeUnit.SECONDS);
        return null;
    }

    /** Cancels {@code cancel} from the observer's start, then records how the run ended. */
    private RunObserver cancelling(Consumer<TaskContext> cancel) {
        return job -> {
            cancel.accept(job);
            return new RunObserver.Run() {
                @Override
                public void ended(RunOutcome outcome, Optional<Throwable> failure) { outcomes.add(outcome); }
            };
        };
    }

    @Test
    void aBatchCancelledBetweenTheStartMarkAndTheHandlerEndsCancelledWithoutRunningIt() throws InterruptedException {
        start(cancelling(job -> binomic.batch(job.batchId().orElseThrow()).cancel()));
        BatchHandle batch = binomic.batch().add(SLOW, new Item("held")).submit();

        WorkerTest.await("the batch ended", () -> batch.status().map(s -> s.state() == BatchStatus.State.SUCCEEDED || s.state() == BatchStatus.State.CANCELLED).orElse(false));
        BatchStatus status = batch.status().orElseThrow();
        assertEquals(1, status.cancelled(), status.toString());
        assertEquals(0, handlerCalls.get(), "the handler of a job cancelled before it was called must not run");
        assertEquals(List.of(RunOutcome.CANCELLED), outcomes);
    }

    @Test
    void aJobCancelledBetweenTheStartMarkAndTheHandlerEndsCancelledWithoutRunningIt() throws InterruptedException {
        start(cancelling(job -> binomic.job(job.queue(), job.messageId()).cancel()));
        JobHandle<Void> handle = binomic.submit(TRACKED, new Item("tracked"));

        WorkerTest.await("the job ended", () -> handle.status().state().isFinal());
        assertEquals(JobState.CANCELLED, handle.status().state());
        assertEquals(0, handlerCalls.get(), "the handler of a job cancelled before it was called must not run");
        assertTrue(outcomes.contains(RunOutcome.CANCELLED), outcomes.toString());
    }
}
