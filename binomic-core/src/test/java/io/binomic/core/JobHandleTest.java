package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobCancelledException;
import io.binomic.api.JobFailedException;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.JobTimeoutException;
import io.binomic.api.NonRetryableException;
import io.binomic.api.RateLimit;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.core.internal.memory.MemoryBroker;
import io.binomic.core.internal.memory.MemoryScheduler;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Job handles on the embedded broker: results, status, history, progress and cancellation, through the public API. */
class JobHandleTest {
    record Order(int id) { }

    record Receipt(int order, String status) { }

    static final Task<Order, Receipt> CHARGE = Task.builder("charge", Order.class, Receipt.class).queue("payments")
            .maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10))).build();
    static final Task<Order, Void> NOTIFY = Task.builder("notify", Order.class).queue("payments").build();

    /** One embedded broker shared by several instances, as processes share a Redis; closed after the test. */
    private final MemoryBroker memory = new MemoryBroker(BrokerConfig.defaults());
    private final Broker shared = new ForwardingBroker(memory) {
        @Override
        public void close() {
            // each instance closes "its" broker; the test closes the one they share
        }
    };
    private final List<Binomic> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
        memory.close();
    }

    private Binomic.Builder builder() {
        return builder(shared);
    }

    private Binomic.Builder builder(Broker broker) {
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().queues("payments").pollTimeout(Duration.ofMillis(50)).shutdownGrace(Duration.ofSeconds(2))
                        .build())
                .build();
        return Binomic.builder().config(config).broker(broker).scheduler(new MemoryScheduler(memory));
    }

    private Binomic started(Binomic.Builder builder) {
        Binomic binomic = builder.build().start();
        opened.add(binomic);
        return binomic;
    }

    @Test
    void theSubmitterAwaitsTheResultAndTheStatusSaysHowItWent() {
        AtomicInteger runs = new AtomicInteger();
        Binomic binomic = started(builder().handle(CHARGE, order -> {
            if (runs.incrementAndGet() == 1) {
                throw new IllegalStateException("card declined once");
            }
            return new Receipt(order.id(), "paid");
        }));
        binomic.startWorker();

        JobHandle<Receipt> job = binomic.submit(CHARGE, new Order(7));

        assertEquals(new Receipt(7, "paid"), job.await(Duration.ofSeconds(10)));
        JobStatus status = job.status();
        assertEquals(JobState.SUCCEEDED, status.state());
        assertEquals("charge", status.task());
        assertEquals(2, status.attempt());
        assertTrue(status.duration().isPresent());
        assertTrue(status.result().orElseThrow().contains("paid"), status.result().orElseThrow());
        List<JobStatus.Attempt> attempts = status.attempts();
        assertEquals(2, attempts.size(), attempts.toString());
        assertEquals("failed", attempts.get(0).outcome());
        assertTrue(attempts.get(0).error().contains("card declined once"), attempts.get(0).error());
        assertEquals("succeeded", attempts.get(1).outcome());
    }

    @Test
    void anotherProcessReadsTheJobByIdAndItsResultLater() {
        Binomic worker = started(builder().handle(CHARGE, order -> new Receipt(order.id(), "paid")));
        worker.startWorker();
        Binomic producer = started(builder().task(CHARGE));
        JobHandle<Receipt> submitted = producer.submit(CHARGE, new Order(1));
        submitted.await(Duration.ofSeconds(10));
        producer.close();

        Binomic later = started(builder().task(CHARGE));
        assertEquals(new Receipt(1, "paid"), later.job(CHARGE, submitted.id()).await(Duration.ofSeconds(1)));
        JobHandle<String> untyped = later.job(submitted.id());
        assertEquals("payments", untyped.queue());
        assertTrue(untyped.await(Duration.ofSeconds(1)).contains("\"order\":1"), untyped.status().result().orElse(""));
    }

    @Test
    void aDeadLetteredJobFailsItsFutureWithTheReason() {
        Binomic binomic = started(builder().handle(CHARGE, order -> {
            throw new NonRetryableException("account closed");
        }));
        binomic.startWorker();

        JobHandle<Receipt> job = binomic.submit(CHARGE, new Order(2));

        JobFailedException failure = assertThrows(JobFailedException.class, () -> job.await(Duration.ofSeconds(10)));
        assertTrue(failure.getMessage().contains("NON_RETRYABLE") && failure.getMessage().contains("account closed"), failure.getMessage());
        JobStatus status = job.status();
        assertEquals(JobState.DEAD_LETTERED, status.state());
        assertEquals(DeadLetterReason.NON_RETRYABLE, status.deadLetterReason().orElseThrow());
    }

    /**
     * Found by an outside tester: a codec that throws encoding the result left the job counted as
     * succeeded, unacknowledged, run again after each lease and dead-lettered as a lease expiry.
     */
    @Test
    void aResultTheCodecCannotEncodeDeadLettersTheJobAtOnceNamingTheCodec() throws Exception {
        Task<Integer, String> shout = Task.builder("shout", Integer.class, String.class).queue("payments")
                .maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10))).build();
        AtomicInteger runs = new AtomicInteger();
        WorkerConfig shortLease = WorkerConfig.builder().queues("payments").pollTimeout(Duration.ofMillis(50))
                .leaseTimeout(Duration.ofMillis(300)).reclaimInterval(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(2)).build();
        Binomic binomic = started(Binomic.builder().config(BinomicConfig.builder().worker(shortLease).build()).broker(shared)
                .scheduler(new MemoryScheduler(memory)).codec(new IntegersOnlyCodec()).handle(shout, n -> {
                    runs.incrementAndGet();
                    return "n=" + n;
                }));
        Worker worker = binomic.startWorker();

        JobHandle<String> job = binomic.submit(shout, 5);

        JobFailedException failure = assertThrows(JobFailedException.class, () -> job.await(Duration.ofSeconds(10)));
        String problem = "the result of task 'shout' (java.lang.String) could not be encoded by codec 'integers-only':"
                + " java.lang.ClassCastException: integers only, not java.lang.String; fix the codec or the task's result type";
        assertTrue(failure.getMessage().contains("NON_RETRYABLE") && failure.getMessage().contains(problem), failure.getMessage());
        JobStatus status = job.status();
        assertEquals(JobState.DEAD_LETTERED, status.state());
        assertEquals(DeadLetterReason.NON_RETRYABLE, status.deadLetterReason().orElseThrow());
        assertEquals("io.binomic.ResultNotEncodable: " + problem, status.error().orElseThrow());
        var letters = binomic.deadLetters().list("payments", io.binomic.api.DeadLetterFilter.all(), 10);
        assertEquals(1, letters.size(), letters.toString());
        assertEquals(DeadLetterReason.NON_RETRYABLE, letters.getFirst().failure().reason());
        assertEquals("io.binomic.ResultNotEncodable", letters.getFirst().failure().errorClass());
        assertEquals(problem, letters.getFirst().failure().errorMessage());
        assertEquals(1, letters.getFirst().failure().attempts());
        Thread.sleep(900); // three leases: a delivery left pending would have been reclaimed and run again by now
        assertEquals(1, runs.get(), "run once, not again after each lease");
        var counters = worker.counters();
        assertEquals(0, counters.succeeded(), counters.toString());
        assertEquals(1, counters.failed(), counters.toString());
        assertEquals(1, counters.deadLettered(), counters.toString());
        assertEquals(0, counters.retried(), counters.toString());
    }

    /**
     * An exception where none was foreseen (here marking the job running fails with something that
     * is not a BrokerException) used to leave the delivery pending, unexplained until its lease
     * lapsed: it is a failed attempt, retried, with the exception in the job's history.
     */
    @Test
    void anUnexpectedFailureOutsideTheHandlerIsAFailedAttemptRetriedNotALeaseWaitedOut() throws Exception {
        AtomicInteger startCalls = new AtomicInteger();
        Broker failsFirstStart = new ForwardingBroker(memory) {
            @Override
            public java.util.Set<java.util.UUID> startJobs(List<io.binomic.api.spi.JobUpdate> starts) {
                if (startCalls.incrementAndGet() == 1) {
                    throw new IllegalStateException("a bug marking the job running");
                }
                return super.startJobs(starts);
            }

            @Override
            public void close() {
            }
        };
        AtomicInteger runs = new AtomicInteger();
        Binomic binomic = started(builder().broker(failsFirstStart).handle(CHARGE, order -> {
            runs.incrementAndGet();
            return new Receipt(order.id(), "paid");
        }));
        Worker worker = binomic.startWorker();

        JobHandle<Receipt> job = binomic.submit(CHARGE, new Order(21));

        // The default lease is far longer than this wait: only a retry gets it done in time.
        assertEquals(new Receipt(21, "paid"), job.await(Duration.ofSeconds(5)));
        JobStatus status = job.status();
        assertEquals(2, status.attempt());
        assertEquals(1, runs.get());
        List<JobStatus.Attempt> attempts = status.attempts();
        assertEquals(2, attempts.size(), attempts.toString());
        assertEquals("failed", attempts.get(0).outcome());
        assertTrue(attempts.get(0).error().startsWith("io.binomic.UnexpectedFailure: ")
                && attempts.get(0).error().contains("java.lang.IllegalStateException: a bug marking the job running"),
                attempts.get(0).error());
        WorkerTest.await("the counters are written", () -> worker.counters().succeeded() == 1);
        assertEquals(1, worker.counters().failed(), worker.counters().toString());
        assertEquals(1, worker.counters().retried(), worker.counters().toString());
    }

    /** A codec that refuses a result with an Error, not an exception, is as final: dead-lettered after one run. */
    @Test
    void aCodecThatThrowsAnErrorOnTheResultDeadLettersTheJobAtOnceToo() throws Exception {
        Task<Integer, String> shout = Task.builder("shout", Integer.class, String.class).queue("payments")
                .maxAttempts(3).backoff(Backoff.fixed(Duration.ofMillis(10))).build();
        AtomicInteger runs = new AtomicInteger();
        Binomic binomic = started(Binomic.builder().broker(shared).scheduler(new MemoryScheduler(memory))
                .codec(new IntegersOnlyCodec(true)).handle(shout, n -> {
                    runs.incrementAndGet();
                    return "n=" + n;
                }));
        binomic.startWorker();

        JobHandle<String> job = binomic.submit(shout, 5);

        JobFailedException failure = assertThrows(JobFailedException.class, () -> job.await(Duration.ofSeconds(10)));
        assertTrue(failure.getMessage().contains("NON_RETRYABLE") && failure.getMessage().contains("java.lang.AssertionError"),
                failure.getMessage());
        assertEquals(1, runs.get(), "run once");
    }

    /** Encodes integers (the argument) as text and refuses anything else, as a codec with a gap in its types does. */
    static final class IntegersOnlyCodec implements io.binomic.api.spi.PayloadCodec {
        private final boolean refusesWithAnError;

        IntegersOnlyCodec() {
            this(false);
        }

        IntegersOnlyCodec(boolean refusesWithAnError) {
            this.refusesWithAnError = refusesWithAnError;
        }

        @Override
        public String id() {
            return "integers-only";
        }

        @Override
        public byte[] encode(Object value) {
            if (!(value instanceof Integer n)) {
                if (refusesWithAnError) {
                    throw new AssertionError("integers only");
                }
                throw new ClassCastException("integers only, not " + value.getClass().getName());
            }
            return n.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }

        @Override
        public <T> T decode(byte[] bytes, Class<T> type) {
            return type.cast(Integer.valueOf(new String(bytes, java.nio.charset.StandardCharsets.UTF_8)));
        }
    }

    @Test
    void aCancelledQueuedJobNeverRuns() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Binomic binomic = started(builder().handle(CHARGE, order -> {
            runs.incrementAndGet();
            return new Receipt(order.id(), "paid");
        }));
        JobHandle<Receipt> job = binomic.submit(CHARGE, new Order(3));
        CompletableFuture<Receipt> result = job.result();

        assertEquals(JobHandle.CancelOutcome.CANCELLED, job.cancel());
        binomic.startWorker();
        JobHandle<Receipt> after = binomic.submit(CHARGE, new Order(4));
        after.await(Duration.ofSeconds(10)); // the worker got past the cancelled one

        assertEquals(1, runs.get(), "only the job that was not cancelled ran");
        assertEquals(JobState.CANCELLED, job.status().state());
        ExecutionException e = assertThrows(ExecutionException.class, () -> result.get(5, TimeUnit.SECONDS));
        assertInstanceOf(JobCancelledException.class, e.getCause());
        assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, job.cancel(), "a second cancel changes nothing");
        // each delivery has its own thread: the cancelled one's ack may be written just after the other's outcome
        WorkerTest.await("the cancelled job's delivery is acked", () -> binomic.queueStats("payments").pending() == 0);
    }

    @Test
    void aRunningJobIsInterruptedOnItsWorkerAndEndsCancelledNotRetried() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicInteger runs = new AtomicInteger();
        Binomic worker = started(builder().handle(CHARGE, order -> {
            runs.incrementAndGet();
            started.countDown();
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                interrupted.set(true);
                throw e;
            }
            return new Receipt(order.id(), "too late");
        }));
        worker.startWorker();
        Binomic other = started(builder().task(CHARGE));
        JobHandle<Receipt> job = other.submit(CHARGE, new Order(5));
        assertTrue(started.await(10, TimeUnit.SECONDS));
        assertEquals(JobState.RUNNING, job.status().state());

        assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, other.job(CHARGE, job.id()).cancel());

        assertThrows(JobCancelledException.class, () -> job.await(Duration.ofSeconds(10)));
        assertTrue(interrupted.get(), "the handler was interrupted");
        JobStatus status = job.status();
        assertEquals(JobState.CANCELLED, status.state());
        assertTrue(status.cancelRequested());
        assertEquals("cancelled", status.attempts().getLast().outcome());
        Thread.sleep(200);
        assertEquals(1, runs.get(), "not retried");
        assertEquals(0, worker.queueStats("payments").deadLetters(), "not dead-lettered");
        assertEquals(0, worker.queueStats("payments").pending());
    }

    @Test
    void aHandlerThatInterruptsItselfIsNotTakenForACancelOrAShutdown() throws Exception {
        // Three shapes of a handler's own interrupt, with no cancel and the worker running: each
        // must end as its handler ended (returned, or failed and retried), never left pending
        // until its lease lapses as if the worker were stopping.
        AtomicInteger runs = new AtomicInteger();
        Binomic binomic = started(builder().handle(CHARGE, order -> {
            int run = runs.incrementAndGet();
            switch (order.id()) {
                case 1 -> {
                    Thread.currentThread().interrupt(); // restored after catching one, then done
                    return new Receipt(1, "paid, flag set");
                }
                case 2 -> {
                    if (run % 2 == 1) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("gave up after an interrupt");
                    }
                    return new Receipt(2, "paid on retry");
                }
                default -> {
                    if (run % 2 == 1) {
                        throw new InterruptedException("its own");
                    }
                    return new Receipt(3, "paid on retry");
                }
            }
        }));
        binomic.startWorker();

        runs.set(0);
        assertEquals(new Receipt(1, "paid, flag set"), binomic.submit(CHARGE, new Order(1)).await(Duration.ofSeconds(10)));
        assertEquals(1, runs.get());
        runs.set(0);
        JobHandle<Receipt> second = binomic.submit(CHARGE, new Order(2));
        assertEquals(new Receipt(2, "paid on retry"), second.await(Duration.ofSeconds(10)));
        assertEquals("failed", second.status().attempts().getFirst().outcome());
        runs.set(0);
        JobHandle<Receipt> third = binomic.submit(CHARGE, new Order(3));
        assertEquals(new Receipt(3, "paid on retry"), third.await(Duration.ofSeconds(10)));
        assertEquals(2, third.status().attempt());
        assertEquals(0, binomic.queueStats("payments").pending());
    }

    @Test
    void cancellingAnUnknownJobSaysSo() {
        Binomic binomic = started(builder().task(CHARGE));
        assertEquals(JobHandle.CancelOutcome.NOT_FOUND, binomic.job(CHARGE, java.util.UUID.randomUUID()).cancel());
        assertEquals(JobState.UNKNOWN, binomic.job(CHARGE, java.util.UUID.randomUUID()).status().state());
    }

    @Test
    void aTaskWithoutResultIsNotTrackedAndSaysHowToTrackIt() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Binomic binomic = started(builder().handle(NOTIFY, order -> {
            runs.incrementAndGet();
            return null;
        }));
        binomic.startWorker();
        JobHandle<Void> job = binomic.submit(NOTIFY, new Order(6));
        WorkerTest.await("the job ran", () -> runs.get() == 1);

        assertFalse(NOTIFY.isTracked());
        assertEquals(JobState.UNKNOWN, job.status().state());
        IllegalStateException e = assertThrows(IllegalStateException.class, job::result);
        assertTrue(e.getMessage().contains("keepStatusFor"), e.getMessage());
    }

    @Test
    void aVoidTaskThatAsksForTrackingHasAStatus() {
        Task<Order, Void> tracked = Task.builder("audit", Order.class).queue("payments").keepStatusFor(Duration.ofMinutes(5)).build();
        Binomic binomic = started(builder().handle(tracked, order -> null));
        binomic.startWorker();

        JobHandle<Void> job = binomic.submit(tracked, new Order(8));

        assertEquals(null, job.await(Duration.ofSeconds(10)));
        assertEquals(JobState.SUCCEEDED, job.status().state());
    }

    @Test
    void progressReportedByTheHandlerShowsInTheStatus() throws Exception {
        CountDownLatch reported = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        Binomic binomic = started(builder().handle(CHARGE, order -> {
            TaskContext.current().progress(40, "contacting the bank");
            reported.countDown();
            finish.await();
            return new Receipt(order.id(), "paid");
        }));
        binomic.startWorker();
        JobHandle<Receipt> job = binomic.submit(CHARGE, new Order(9));
        assertTrue(reported.await(10, TimeUnit.SECONDS));

        // Progress is written off the handler's thread: it shows a moment after the report.
        WorkerTest.await("the progress shows", () -> job.status().progress().isPresent());
        JobStatus running = job.status();
        assertEquals(JobState.RUNNING, running.state());
        assertEquals(40, running.progress().orElseThrow());
        assertEquals("contacting the bank", running.progressNote().orElseThrow());
        assertTrue(running.worker().isPresent() && running.startedAt().isPresent());
        finish.countDown();
        job.await(Duration.ofSeconds(10));
    }

    @Test
    void awaitGivesUpAfterItsTimeoutAndTheJobGoesOn() {
        Binomic binomic = started(builder().task(CHARGE));
        JobHandle<Receipt> job = binomic.submit(CHARGE, new Order(10));

        JobTimeoutException e = assertThrows(JobTimeoutException.class, () -> job.await(Duration.ofMillis(200)));
        assertTrue(e.getMessage().contains("QUEUED"), e.getMessage());
        assertEquals(JobState.QUEUED, job.status().state());
    }

    @Test
    void aProducerSubmitsWithoutTheHandlerAndAWorkerWithoutOneRefusesToStart() {
        Binomic producer = started(builder().task(CHARGE).task(NOTIFY));
        producer.submit(CHARGE, new Order(11));

        IllegalStateException e = assertThrows(IllegalStateException.class, producer::startWorker);
        assertTrue(e.getMessage().contains("charge") && e.getMessage().contains("notify") && e.getMessage().contains("handle("),
                e.getMessage());
        Binomic worker = started(builder().handle(CHARGE, order -> new Receipt(order.id(), "paid"))
                .handle(NOTIFY, order -> null));
        worker.startWorker();
        assertEquals(new Receipt(12, "paid"), producer.submit(CHARGE, new Order(12)).await(Duration.ofSeconds(10)));
    }

    @Test
    void aJobSubmittedByNameAsJsonIsCheckedByTheWorker() {
        Binomic binomic = started(builder().handle(CHARGE, order -> new Receipt(order.id(), "paid")));
        binomic.startWorker();

        JobHandle<String> good = binomic.submitJson("payments", "charge", "{\"id\":13}");
        assertTrue(good.await(Duration.ofSeconds(10)).contains("\"order\":13"));

        // A client that knows the task refuses what its worker could not decode ...
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> binomic.submitJson("payments", "charge", "{\"idd\":13}"));
        assertTrue(refused.getMessage().contains("task 'charge' takes a " + Order.class.getName())
                && refused.getMessage().contains("DECODE_ERROR"), refused.getMessage());
        // ... and one that knows only its name leaves that to the worker.
        Binomic byName = started(builder());
        JobHandle<String> misfit = byName.submitJson("payments", "charge", "{\"idd\":13}");
        assertThrows(JobFailedException.class, () -> misfit.await(Duration.ofSeconds(10)));
        assertEquals(DeadLetterReason.DECODE_ERROR, misfit.status().deadLetterReason().orElseThrow());

        JobHandle<String> unknown = binomic.submitJson("payments", "no-such-task", "{}");
        assertThrows(JobFailedException.class, () -> unknown.await(Duration.ofSeconds(10)));
        assertEquals(DeadLetterReason.TASK_NOT_FOUND, unknown.status().deadLetterReason().orElseThrow());

        IllegalArgumentException notJson = assertThrows(IllegalArgumentException.class,
                () -> binomic.submitJson("payments", "charge", "{id: 13"));
        assertTrue(notJson.getMessage().contains("not JSON"), notJson.getMessage());
    }

    @Test
    void awaitingAJobNobodyKeepsAStatusForFailsAtOnceSayingWhy() {
        Binomic binomic = started(builder().task(CHARGE));
        java.util.UUID unknown = java.util.UUID.randomUUID();
        long start = System.nanoTime();

        var e = assertThrows(io.binomic.api.JobNotFoundException.class, () -> binomic.job(CHARGE, unknown).await(Duration.ofSeconds(30)));

        assertTrue(Duration.ofNanos(System.nanoTime() - start).compareTo(Duration.ofSeconds(10)) < 0, "did not wait out the timeout");
        assertTrue(e.getMessage().contains("no status is kept for job " + unknown), e.getMessage());
    }

    @Test
    void aHandleOfTheWrongTaskSaysWhichTaskTheJobIsOf() {
        Binomic binomic = started(builder().handle(CHARGE, order -> new Receipt(order.id(), "paid")));
        binomic.startWorker();
        JobHandle<Receipt> job = binomic.submit(CHARGE, new Order(14));
        job.await(Duration.ofSeconds(10));
        Task<Order, String> other = Task.builder("refund", Order.class, String.class).queue("payments").build();

        var e = assertThrows(IllegalArgumentException.class, () -> binomic.job(other, job.id()).await(Duration.ofSeconds(5)));

        assertTrue(e.getMessage().contains("is of task 'charge', not 'refund'"), e.getMessage());
    }

    @Test
    void aRetryingJobSaysWhenItsNextAttemptIsDue() throws Exception {
        Task<Order, Receipt> slowRetry = Task.builder("slow-retry", Order.class, Receipt.class).queue("payments").maxAttempts(2)
                .backoff(Backoff.fixed(Duration.ofMinutes(10))).build();
        Binomic binomic = started(builder().handle(slowRetry, order -> {
            throw new IllegalStateException("bank offline");
        }));
        binomic.startWorker();
        JobHandle<Receipt> job = binomic.submit(slowRetry, new Order(15));
        WorkerTest.await("the first attempt failed", () -> job.status().state() == JobState.RETRYING);

        JobStatus status = job.status();
        assertTrue(status.due().orElseThrow().isAfter(java.time.Instant.now().plus(Duration.ofMinutes(9))), status.toString());
        assertTrue(status.error().orElseThrow().contains("bank offline"));
    }

    @Test
    void aResultOverThePayloadLimitIsNotKeptAndTheWaiterIsToldWhy() {
        BinomicConfig config = BinomicConfig.builder().broker(BrokerConfig.builder().url("memory://small").maxPayloadBytes(1024).build())
                .worker(WorkerConfig.builder().queues("payments").pollTimeout(Duration.ofMillis(50)).build()).build();
        Task<Order, String> big = Task.builder("big", Order.class, String.class).queue("payments").build();
        Binomic binomic = Binomic.builder().config(config).handle(big, order -> "x".repeat(5_000)).build().start();
        opened.add(binomic);
        binomic.startWorker();

        JobHandle<String> job = binomic.submit(big, new Order(16));

        var e = assertThrows(io.binomic.api.BinomicException.class, () -> job.await(Duration.ofSeconds(10)));
        assertTrue(e.getMessage().contains("succeeded, but the result of") && e.getMessage().contains("maxPayloadBytes"), e.getMessage());
        assertEquals(JobState.SUCCEEDED, job.status().state());
        assertTrue(job.status().result().isEmpty());
    }

    @Test
    void theTrackedJobsOfOneFetchAreMarkedStartedInOneCall() {
        java.util.concurrent.atomic.AtomicInteger calls = new java.util.concurrent.atomic.AtomicInteger();
        Broker counting = new ForwardingBroker(memory) {
            @Override
            public java.util.Set<java.util.UUID> startJobs(List<io.binomic.api.spi.JobUpdate> starts) {
                calls.incrementAndGet();
                return super.startJobs(starts);
            }

            @Override
            public void close() {
            }
        };
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().queues("payments").concurrency(50).pollTimeout(Duration.ofMillis(50)).build()).build();
        Binomic binomic = Binomic.builder().config(config).broker(counting).scheduler(new MemoryScheduler(memory))
                .handle(CHARGE, order -> new Receipt(order.id(), "paid")).build().start();
        opened.add(binomic);
        List<JobHandle<Receipt>> jobs = binomic.submitAll(CHARGE, java.util.stream.IntStream.range(0, 40).mapToObj(Order::new).toList());

        binomic.startWorker();

        for (JobHandle<Receipt> job : jobs) {
            assertEquals(JobState.SUCCEEDED, awaitEnd(job));
        }
        assertTrue(calls.get() < 40, "40 jobs fetched together were marked started in " + calls.get() + " calls");
    }

    /**
     * A job held for its reserved start under a rate limit is not running yet: its status says
     * RUNNING only as its handler begins, not from the fetch that reserved its start.
     */
    @Test
    void aJobHeldForItsRateLimitedStartIsNotRunningBeforeItsHandler() throws Exception {
        Task<Order, Receipt> limited = Task.builder("limited-charge", Order.class, Receipt.class).queue("payments")
                .rateLimit(RateLimit.perSecond(2)).build();
        Map<Integer, Long> handlerEntered = new ConcurrentHashMap<>();
        // the memory broker itself: the shared forwarding one keeps the capabilities to itself
        Binomic binomic = started(builder(memory).handle(limited, order -> {
            handlerEntered.put(order.id(), System.nanoTime());
            return new Receipt(order.id(), "paid");
        }));
        // after a quiet spell two start at once (the default burst of 1 is one beyond the steady rate)
        JobHandle<Receipt> first = binomic.submit(limited, new Order(1));
        JobHandle<Receipt> second = binomic.submit(limited, new Order(2));
        JobHandle<Receipt> held = binomic.submit(limited, new Order(3)); // fetched with them, its start reserved 0.5 s on
        binomic.startWorker();

        List<Long> seenRunning = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!held.status().state().isFinal() && System.nanoTime() < deadline) {
            long before = System.nanoTime();
            if (held.status().state() == JobState.RUNNING) {
                seenRunning.add(before);
            }
            Thread.sleep(5);
        }
        assertEquals(new Receipt(1, "paid"), first.await(Duration.ofSeconds(5)));
        assertEquals(new Receipt(2, "paid"), second.await(Duration.ofSeconds(5)));
        assertEquals(new Receipt(3, "paid"), held.await(Duration.ofSeconds(5)));
        long entered = handlerEntered.get(3);
        for (long seen : seenRunning) {
            assertTrue(entered - seen < TimeUnit.MILLISECONDS.toNanos(250),
                    "status RUNNING " + TimeUnit.NANOSECONDS.toMillis(entered - seen) + " ms before the held job's handler began");
        }
    }

    private static JobState awaitEnd(JobHandle<Receipt> job) {
        job.await(Duration.ofSeconds(10));
        return job.status().state();
    }
}
