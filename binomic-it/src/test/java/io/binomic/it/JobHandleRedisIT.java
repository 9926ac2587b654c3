package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.JobCancelledException;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Job handles on a real Redis, between separate Binomic instances (a producer, a worker, a later
 * reader) as separate processes would use them: results through pub/sub, status by id after the
 * submitter is gone, cancellation of a running job on another instance's worker.
 */
class JobHandleRedisIT {
    record Resize(int width) { }

    record Image(int width, String url) { }

    private final String queue = "images-" + UUID.randomUUID().toString().substring(0, 8);
    private final Task<Resize, Image> resize = Task.builder("resize", Resize.class, Image.class).queue(queue).maxAttempts(3).build();
    private final List<Binomic> opened = new ArrayList<>();

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
    }

    private Binomic.Builder builder() {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisServer.shared().url())
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(200)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        return Binomic.builder().config(config);
    }

    private Binomic started(Binomic.Builder builder) {
        Binomic binomic = builder.build().start();
        opened.add(binomic);
        return binomic;
    }

    @Test
    void aProducerAwaitsResultsAWorkerInAnotherInstanceComputes() {
        Binomic worker = started(builder().handle(resize, r -> {
            TaskContext.current().progress(100, "done");
            return new Image(r.width(), "https://cdn/" + r.width());
        }));
        worker.startWorker();
        Binomic producer = started(builder());

        List<JobHandle<Image>> jobs = new ArrayList<>();
        for (int width = 1; width <= 50; width++) {
            jobs.add(producer.submit(resize, new Resize(width)));
        }
        for (int i = 0; i < jobs.size(); i++) {
            assertEquals(new Image(i + 1, "https://cdn/" + (i + 1)), jobs.get(i).await(Duration.ofSeconds(20)));
        }
        JobStatus status = jobs.getFirst().status();
        assertEquals(JobState.SUCCEEDED, status.state());
        assertEquals(1, status.attempts().size());
        assertTrue(status.worker().isPresent());
    }

    @Test
    void theStatusOutlivesTheSubmitterAndIsReadByIdElsewhere() {
        Binomic worker = started(builder().handle(resize, r -> new Image(r.width(), "u")));
        worker.startWorker();
        Binomic producer = started(builder());
        JobHandle<Image> job = producer.submit(resize, new Resize(640));
        job.await(Duration.ofSeconds(20));
        producer.close();

        Binomic reader = started(builder());
        assertEquals(new Image(640, "u"), reader.job(resize, job.id()).await(Duration.ofSeconds(1)));
        JobHandle<String> untyped = reader.job(queue, job.id());
        assertEquals(JobState.SUCCEEDED, untyped.status().state());
        assertTrue(untyped.await(Duration.ofSeconds(1)).contains("640"));
        long ttl = (Long) RedisServer.shared().call("PTTL", "binomic:{" + queue + "}:job:" + job.id());
        assertTrue(ttl > 0 && ttl <= Task.DEFAULT_RESULT_RETENTION.toMillis(), "expires after its retention, was " + ttl);
    }

    /**
     * Found by an outside tester on Redis: a codec that throws encoding the result left each job
     * pending, counted as succeeded, run again after each lease and dead-lettered as a lease expiry.
     */
    @Test
    void aResultTheCodecCannotEncodeIsDeadLetteredAtOnceNamingTheCodec() throws Exception {
        Task<Integer, String> shout = Task.builder("shout", Integer.class, String.class).queue(queue).maxAttempts(3).build();
        AtomicInteger runs = new AtomicInteger();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(RedisServer.shared().url())
                .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(100)).leaseTimeout(Duration.ofMillis(600))
                        .reclaimInterval(Duration.ofMillis(200)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        Binomic binomic = started(Binomic.builder().config(config).codec(new IntegersOnlyCodec()).handle(shout, n -> {
            runs.incrementAndGet();
            return "n=" + n;
        }));
        io.binomic.core.Worker worker = binomic.startWorker();

        List<JobHandle<String>> jobs = new ArrayList<>();
        for (int n = 0; n < 5; n++) {
            jobs.add(binomic.submit(shout, n));
        }

        String problem = "the result of task 'shout' (java.lang.String) could not be encoded by codec 'integers-only':"
                + " java.lang.ClassCastException: integers only; fix the codec or the task's result type";
        for (JobHandle<String> job : jobs) {
            var failure = assertThrows(io.binomic.api.JobFailedException.class, () -> job.await(Duration.ofSeconds(20)));
            assertTrue(failure.getMessage().contains("NON_RETRYABLE") && failure.getMessage().contains(problem), failure.getMessage());
            assertEquals(JobState.DEAD_LETTERED, job.status().state());
        }
        var letters = binomic.deadLetters().list(queue, io.binomic.api.DeadLetterFilter.all(), 10);
        assertEquals(5, letters.size(), letters.toString());
        for (var letter : letters) {
            assertEquals(io.binomic.api.DeadLetterReason.NON_RETRYABLE, letter.failure().reason());
            assertEquals("io.binomic.ResultNotEncodable", letter.failure().errorClass());
            assertEquals(problem, letter.failure().errorMessage());
        }
        Thread.sleep(1_500); // past two leases: a delivery left pending would have run again by now
        assertEquals(5, runs.get(), "each job ran once");
        assertEquals(0L, pendingCount(), "nothing left pending");
        var counters = worker.counters();
        assertEquals(0, counters.succeeded(), counters.toString());
        assertEquals(5, counters.failed(), counters.toString());
        assertEquals(5, counters.deadLettered(), counters.toString());
    }

    private long pendingCount() {
        Object reply = RedisServer.shared().call("XPENDING", "binomic:{" + queue + "}:stream", "binomic");
        return (Long) ((List<?>) reply).getFirst();
    }

    /** Encodes integers (the argument) as text and refuses anything else, as a codec with a gap in its types does. */
    static final class IntegersOnlyCodec implements io.binomic.api.spi.PayloadCodec {
        @Override
        public String id() {
            return "integers-only";
        }

        @Override
        public byte[] encode(Object value) {
            if (!(value instanceof Integer n)) {
                throw new ClassCastException("integers only");
            }
            return n.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }

        @Override
        public <T> T decode(byte[] bytes, Class<T> type) {
            return type.cast(Integer.valueOf(new String(bytes, java.nio.charset.StandardCharsets.UTF_8)));
        }
    }

    @Test
    void aRunningJobIsCancelledFromAnotherInstanceAndEndsCancelled() throws Exception {
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicInteger runs = new AtomicInteger();
        Binomic worker = started(builder().handle(resize, r -> {
            runs.incrementAndGet();
            started.countDown();
            try {
                Thread.sleep(120_000);
            } catch (InterruptedException e) {
                interrupted.set(true);
                throw e;
            }
            return new Image(0, "late");
        }));
        worker.startWorker();
        Binomic producer = started(builder());
        JobHandle<Image> job = producer.submit(resize, new Resize(1));
        assertTrue(started.await(20, TimeUnit.SECONDS));

        Binomic admin = started(builder());
        assertEquals(JobHandle.CancelOutcome.CANCEL_REQUESTED, admin.job(queue, job.id()).cancel());

        assertThrows(JobCancelledException.class, () -> job.await(Duration.ofSeconds(20)));
        assertTrue(interrupted.get());
        assertEquals(JobState.CANCELLED, job.status().state());
        Thread.sleep(500);
        assertEquals(1, runs.get(), "not retried");
        assertEquals(0, producer.queueStats(queue).pending());
        assertEquals(0, producer.queueStats(queue).deadLetters());
    }

    @Test
    void aQueuedJobCancelledBeforeAnyWorkerStartsNeverRuns() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        Binomic producer = started(builder());
        JobHandle<Image> cancelled = producer.submit(resize, new Resize(1));
        assertEquals(JobHandle.CancelOutcome.CANCELLED, cancelled.cancel());

        Binomic worker = started(builder().handle(resize, r -> {
            runs.incrementAndGet();
            return new Image(r.width(), "u");
        }));
        worker.startWorker();
        producer.submit(resize, new Resize(2)).await(Duration.ofSeconds(20));

        assertEquals(1, runs.get());
        assertEquals(JobState.CANCELLED, cancelled.status().state());
        assertEquals(JobHandle.CancelOutcome.ALREADY_ENDED, cancelled.cancel());
    }

    @Test
    void aTaskThatIsNotTrackedWritesNoRecord() throws Exception {
        Task<Resize, Void> fireAndForget = Task.builder("forget", Resize.class).queue(queue).build();
        AtomicInteger runs = new AtomicInteger();
        Binomic binomic = started(builder().handle(fireAndForget, r -> {
            runs.incrementAndGet();
            return null;
        }));
        binomic.startWorker();
        JobHandle<Void> job = binomic.submit(fireAndForget, new Resize(1));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (runs.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(1, runs.get());
        assertEquals(0L, RedisServer.shared().call("EXISTS", "binomic:{" + queue + "}:job:" + job.id()));
        assertEquals(JobState.UNKNOWN, job.status().state());
    }
}
