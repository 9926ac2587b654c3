package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchNotFoundException;
import io.binomic.api.BatchStatus;
import io.binomic.api.JobHandle;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * Batches end to end on the memory broker, with a worker: the examples of {@link BatchBuilder},
 * {@link BatchHandle} and batches.md are regions of this file.
 */
class BatchSnippetsTest {
    record Email(String to) { }

    record Report(String title) { }

    static final Task<Email, Void> send = Task.builder("send-email", Email.class).queue("emails").maxAttempts(1).build();
    static final Task<Email, Void> audit = Task.builder("audit-email", Email.class).queue("audit").build();
    static final Task<Report, Void> report = Task.builder("report", Report.class).queue("reports").build();

    /** What each callback saw: its argument's title and the batch summary. */
    record Seen(String title, BatchStatus status) { }

    @Test
    void aBatchAcrossQueuesRunsItsCallbacksOnceWithTheSummary() throws Exception {
        LinkedBlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
        try (Binomic binomic = Binomic.builder()
                .handle(send, email -> {
                    if (email.to().startsWith("bounce")) {
                        throw new IllegalStateException("mailbox unavailable");
                    }
                    return null;
                })
                .handle(audit, email -> null)
                .handle(report, r -> {
                    seen.add(new Seen(r.title(), TaskContext.current().batch().orElseThrow()));
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            // @start region="batch"
            BatchHandle batch = binomic.batch()
                    .add(send, new Email("ada@example.com"))
                    .add(send, new Email("bounce@example.com"))
                    .add(audit, new Email("ada@example.com"))       // another queue, same batch
                    .onSuccess(report, new Report("all sent"))
                    .onComplete(report, new Report("done"))
                    .onDeath(report, new Report("a mail failed"))
                    .submit();
            // in the callback's handler: TaskContext.current().batch() -> counts, failed job ids
            // @end
            Seen first = seen.poll(10, TimeUnit.SECONDS);
            Seen second = seen.poll(10, TimeUnit.SECONDS);
            assertEquals(Set.of("a mail failed", "done"), Set.of(first.title(), second.title()));
            Seen done = first.title().equals("done") ? first : second;
            assertEquals(3, done.status().total());
            assertEquals(2, done.status().succeeded());
            assertEquals(1, done.status().deadLettered());
            assertEquals(1, done.status().failedJobs().size());
            assertEquals(BatchStatus.State.FAILED, done.status().state());
            assertEquals(null, seen.poll(300, TimeUnit.MILLISECONDS), "no success callback, no second callback");
            assertEquals(Set.of(BatchStatus.Callback.DEATH, BatchStatus.Callback.COMPLETE),
                    binomic.batch(batch.id()).status().orElseThrow().fired());
        }
    }

    @Test
    void aJobOfAnOpenBatchAddsJobsAndTheCloseCompletesIt() throws Exception {
        LinkedBlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
        CompletableFuture<Binomic> client = new CompletableFuture<>();
        try (Binomic binomic = Binomic.builder()
                .handle(send, email -> {
                    // @start region="grow"
                    // client: a CompletableFuture<Binomic> completed with this instance after build(), before startWorker()
                    UUID batchId = TaskContext.current().batchId().orElseThrow();
                    if (email.to().equals("list@example.com")) {
                        for (String member : List.of("a@example.com", "b@example.com")) {
                            client.join().batch(batchId).add(send, new Email(member));
                        }
                    }
                    // @end
                    return null;
                })
                .handle(report, r -> {
                    seen.add(new Seen(r.title(), TaskContext.current().batch().orElseThrow()));
                    return null;
                })
                .build().start()) {
            client.complete(binomic);
            BatchHandle batch = binomic.batch().keepOpen().add(send, new Email("list@example.com"))
                    .onSuccess(report, new Report("all sent")).submit();
            binomic.startWorker();
            awaitEnded(binomic, batch.id(), 3);
            assertEquals(null, seen.poll(200, TimeUnit.MILLISECONDS), "open: no callback yet");
            batch.close();
            Seen s = seen.poll(10, TimeUnit.SECONDS);
            assertEquals("all sent", s.title());
            assertEquals(3, s.status().succeeded());
            assertThrows(IllegalStateException.class, () -> batch.add(send, new Email("late@example.com")));
        }
    }

    /** batches.md's fan-out as a newcomer writes it: the handler gets the client through a holder completed before startWorker(). */
    @Test
    void aHandlerGivenTheClientBeforeTheWorkerStartsAddsToItsBatchAndClosesIt() throws Exception {
        LinkedBlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
        CompletableFuture<Binomic> client = new CompletableFuture<>();
        try (Binomic binomic = Binomic.builder().handle(send, email -> {
                    if (email.to().equals("members@example.com")) {
                        BatchHandle mine = client.join().batch(TaskContext.current().batchId().orElseThrow());
                        for (String member : List.of("ada@example.com", "grace@example.com")) {
                            mine.add(send, new Email(member));
                        }
                        mine.close();
                    }
                    return null;
                })
                .handle(report, r -> {
                    seen.add(new Seen(r.title(), TaskContext.current().batch().orElseThrow()));
                    return null;
                })
                .build().start()) {
            client.complete(binomic);
            binomic.batch().keepOpen()
                    .add(send, new Email("members@example.com"))
                    .onComplete(report, new Report("members done"))
                    .submit();
            binomic.startWorker();
            Seen s = seen.poll(10, TimeUnit.SECONDS);
            assertEquals("members done", s.title());
            assertEquals(3, s.status().total(), s.status().toString());
            assertEquals(3, s.status().succeeded(), s.status().toString());
            assertFalse(s.status().open(), "the handler closed it");
        }
    }

    @Test
    void aCancelledBatchNeverRunsItsQueuedJobsAndInterruptsItsRunningOnes() throws Exception {
        CountDownLatch running = new CountDownLatch(2);
        java.util.concurrent.atomic.AtomicInteger runs = new java.util.concurrent.atomic.AtomicInteger();
        LinkedBlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
        Task<Email, Void> slow = Task.builder("slow", Email.class).queue("slow").build();
        try (Binomic binomic = Binomic.builder()
                .handle(slow, email -> {
                    runs.incrementAndGet();
                    running.countDown();
                    Thread.sleep(60_000);
                    return null;
                })
                .handle(report, r -> {
                    seen.add(new Seen(r.title(), TaskContext.current().batch().orElseThrow()));
                    return null;
                })
                .build().start()) {
            BatchHandle queued = binomic.batch().add(slow, new Email("1")).add(slow, new Email("2"))
                    .onComplete(report, new Report("queued")).submit();
            assertEquals(JobHandle.CancelOutcome.CANCELLED, queued.cancel(), "as a workflow's cancel says it");
            binomic.startWorker();
            Seen s = seen.poll(10, TimeUnit.SECONDS);
            assertEquals("queued", s.title());
            assertEquals(2, s.status().cancelled());
            assertEquals(BatchStatus.State.CANCELLED, queued.status().orElseThrow().state(), "as a cancelled workflow's state");
            assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, queued.cancel(), "an ended batch: nothing to cancel");
            assertEquals(JobHandle.CancelOutcome.NOT_FOUND, binomic.batch(UUID.randomUUID()).cancel(),
                    "an unknown batch: no status, nothing to cancel, and no exception, as for a workflow");
            assertEquals(0, runs.get(), "a cancelled queued job never runs");

            BatchHandle started = binomic.batch().add(slow, new Email("3")).add(slow, new Email("4"))
                    .onComplete(report, new Report("running")).submit();
            assertTrue(running.await(10, TimeUnit.SECONDS));
            assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, started.cancel(), "its jobs were running: they are interrupted");
            s = seen.poll(10, TimeUnit.SECONDS);
            assertEquals("running", s.title(), "the running jobs were interrupted, so the batch completed");
            assertEquals(2, s.status().cancelled());
            assertTrue(s.status().cancelRequested());
            assertEquals(BatchStatus.State.CANCELLED, s.status().state());
        }
    }

    /** A job that ignores its interrupt (CPU-bound code does) changes nothing by a second cancel; the batch counts once. */
    @Test
    void aSecondCancelWhileAJobStillRunsChangesNothingAndTheBatchIsCountedCancelledOnce() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Task<Email, Void> stubborn = Task.builder("stubborn", Email.class).queue("stubborn").build();
        try (Binomic binomic = Binomic.builder()
                .handle(stubborn, email -> {
                    running.countDown();
                    while (!release.await(10, TimeUnit.MILLISECONDS) || Thread.interrupted()) {
                        Thread.interrupted(); // ignores the interrupt, as a busy loop does
                    }
                    return null;
                })
                .build().start()) {
            binomic.startWorker();
            BatchHandle batch = binomic.batch().add(stubborn, new Email("1")).submit();
            assertTrue(running.await(10, TimeUnit.SECONDS));
            assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, batch.cancel());
            assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, batch.cancel(), "asked already: a repeat changes nothing");
            assertEquals(1, binomic.flowCounters().batchesCancelled(), "one batch cancelled, however many calls asked");
            release.countDown();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (batch.status().orElseThrow().pending() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertEquals(0, batch.status().orElseThrow().pending(), "its job ended");
            assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, batch.cancel());
            assertEquals(1, binomic.flowCounters().batchesCancelled());
        }
    }

    @Test
    void closeSaysWhetherItClosedTheBatchAndABatchNotKeptOpenWasClosedAtItsSubmit() {
        try (Binomic binomic = Binomic.builder().build().start()) {
            BatchHandle closedAtSubmit = binomic.batch().add(send, new Email("a")).submit();
            assertFalse(closedAtSubmit.close(), "not kept open: its submit closed it");
            BatchHandle open = binomic.batch().keepOpen().add(send, new Email("b")).submit();
            assertTrue(open.close());
            assertFalse(open.close(), "closed already");
            var unknown = assertThrows(BatchNotFoundException.class, () -> binomic.batch(UUID.randomUUID()).close());
            assertTrue(unknown.getMessage().contains("no batch "), unknown.getMessage());
        }
    }

    @Test
    void aCallbackOnAQueueNoWorkerReadsIsAcceptedWithAWarningNamingTheQueueAndTheCallback() throws Exception {
        Task<Report, Void> unread = Task.builder("report-unread", Report.class).queue("unread-" + UUID.randomUUID()).build();
        List<LogRecord> warnings = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override public void publish(LogRecord r) { if (r.getLevel() == java.util.logging.Level.WARNING) { warnings.add(r); } }
            @Override public void flush() { }
            @Override public void close() { }
        };
        Logger logger = Logger.getLogger(io.binomic.core.internal.client.BatchSubmitter.class.getName());
        logger.addHandler(capture);
        try (Binomic binomic = Binomic.builder().handle(report, r -> null).handle(send, e -> null).build().start()) {
            binomic.startWorker();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while ((binomic.queueStats(report.queue()).consumers() == 0 || binomic.queueStats(send.queue()).consumers() == 0)
                    && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            binomic.batch().add(send, new Email("a")).onComplete(report, new Report("read")).submit();
            assertEquals(List.of(), warnings.stream().map(LogRecord::getMessage).toList(), "a worker reads the jobs' and the reports queue");

            BatchHandle batch = binomic.batch().add(send, new Email("b")).onSuccess(unread, new Report("unread")).submit();
            assertEquals(1, warnings.size());
            String line = java.text.MessageFormat.format(warnings.getFirst().getMessage(), warnings.getFirst().getParameters());
            // Binomic.builder() alone is the embedded broker: a producer that meant a Redis learns it is not on one.
            assertEquals("batch " + batch.id() + ": its onSuccess callback (task report-unread) goes to queue '" + unread.queue()
                    + "', which no worker reads (it has no consumer): the callback waits there until a worker of that queue starts;"
                    + " this client's broker is memory://, embedded in this JVM (Binomic.builder() without a broker URL): no worker of"
                    + " another process reads it; for a Redis, build the client with BinomicConfig.builder().brokerUrl(...)", line);
        } finally {
            logger.removeHandler(capture);
        }
    }

    @Test
    void aJobWhoseHandlerReturnedCountsSucceededThoughItsBatchWasCancelledMeanwhile() throws Exception {
        Task<Email, Void> selfCancelling = Task.builder("self-cancelling", Email.class).queue("self-cancelling").maxAttempts(1).build();
        LinkedBlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
        try (Binomic binomic = Binomic.builder()
                .handle(selfCancelling, email -> {
                    SELF.get().batch(TaskContext.current().batchId().orElseThrow()).cancel();
                    // the cancel's interrupt reaches this thread; the handler then returns: its work is done
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                    while (!Thread.currentThread().isInterrupted() && System.nanoTime() < deadline) {
                        Thread.onSpinWait();
                    }
                    return null;
                })
                .handle(report, r -> {
                    seen.add(new Seen(r.title(), TaskContext.current().batch().orElseThrow()));
                    return null;
                })
                .build().start()) {
            SELF.set(binomic);
            binomic.startWorker();
            binomic.batch().add(selfCancelling, new Email("a")).onComplete(report, new Report("done")).submit();
            Seen s = seen.poll(10, TimeUnit.SECONDS);
            assertEquals("done", s.title());
            assertTrue(s.status().cancelRequested());
            assertEquals(1, s.status().succeeded(), "its handler returned: " + s.status());
            assertEquals(0, s.status().cancelled());
        } finally {
            SELF.set(null);
        }
    }

    /** The Binomic whose handler cancels its own batch. */
    private static final java.util.concurrent.atomic.AtomicReference<Binomic> SELF = new java.util.concurrent.atomic.AtomicReference<>();

    @Test
    void aBadBatchIsRefusedNamingTheFieldAndTheFix() {
        Task<Email, Void> unique = Task.builder("u", Email.class).unique(io.binomic.api.Uniqueness.whileQueued(Duration.ofMinutes(1))).build();
        try (Binomic binomic = Binomic.builder().build().start()) {
            var empty = assertThrows(IllegalStateException.class, () -> binomic.batch().submit());
            assertTrue(empty.getMessage().contains("add(task, argument) before submit()"), empty.getMessage());
            var delayed = assertThrows(IllegalArgumentException.class, () -> binomic.batch()
                    .add(send, new Email("a"), SubmitOptions.builder().delay(Duration.ofSeconds(1)).build()));
            assertTrue(delayed.getMessage().contains("SubmitOptions.delay"), delayed.getMessage());
            var uniq = assertThrows(IllegalArgumentException.class, () -> binomic.batch().add(unique, new Email("a")));
            assertTrue(uniq.getMessage().contains("a task that is unique (Task.Builder.unique)")
                    && !uniq.getMessage().contains("SubmitOptions"), "names the task's setting, not an option it was not given: "
                    + uniq.getMessage());
            var keyed = assertThrows(IllegalArgumentException.class, () -> binomic.batch()
                    .add(send, new Email("a"), SubmitOptions.builder().partitionKey("k").build()));
            assertTrue(keyed.getMessage().contains("a partition key (SubmitOptions.partitionKey)"), keyed.getMessage());
            var twice = assertThrows(IllegalStateException.class, () -> binomic.batch()
                    .onDeath(report, new Report("x")).onDeath(report, new Report("y")));
            assertTrue(twice.getMessage().contains("at most one callback of each kind"), twice.getMessage());
            assertTrue(binomic.batch(UUID.randomUUID()).status().isEmpty());
        }
    }

    private static void awaitEnded(Binomic binomic, UUID id, int ended) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            BatchStatus s = binomic.batch(id).status().orElseThrow();
            if (s.total() == ended && s.pending() == 0) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("batch " + id + " did not end " + ended + " jobs: " + binomic.batch(id).status());
    }
}
