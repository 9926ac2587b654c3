package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BinomicConfig;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

/**
 * A worker reading several queues, one of which has a key that is not a stream (an operator's
 * mistake, a clash with another application): the healthy queues' jobs run at once as their first
 * attempt, the broken queue's healthy priority levels too (at its retry pace), and its broken part
 * once the key is repaired, none of them having burned an attempt while it was broken.
 */
class BrokenQueueIsolationIT {
    private static final Duration LEASE = Duration.ofSeconds(6);
    /** Well before the lease: a job read and dropped with a failed fetch would run only after it. */
    private static final Duration PROMPTLY = Duration.ofSeconds(3);

    private final RedisServer redis = RedisServer.shared();

    /** Queue names of one test's own, so the shared server's other keys never meet them. */
    private static String suffix() {
        return UUID.randomUUID().toString().substring(0, 8);
    }

    /** A worker on {@code queues} with a lease short enough that a lost delivery would show within a test. */
    private BinomicConfig config(int concurrency, String... queues) {
        WorkerConfig worker = WorkerConfig.builder().queues(queues).concurrency(concurrency)
                .leaseTimeout(LEASE).pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(500)).build();
        return BinomicConfig.builder().brokerUrl(redis.url()).worker(worker).build();
    }

    @Test
    void aPriorityStreamOfTheWrongTypeOnOneQueueNeitherDelaysTheOthersNorBurnsAttempts() throws Exception {
        String suffix = suffix();
        String qk = "qk-" + suffix;
        String ql = "ql-" + suffix;
        String qm = "qm-" + suffix;
        String qn = "qn-" + suffix;
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        Map<String, Integer> runs = new ConcurrentHashMap<>();
        BinomicConfig config = config(20, qk, ql, qm, qn);
        Task<String, Void> onK = Task.builder("work", String.class).queue(qk).maxAttempts(1).build();
        Task<String, Void> onL = Task.builder("work", String.class).queue(ql).maxAttempts(1).build();
        try (Binomic producer = Binomic.builder().config(config).build().start();
             Binomic worker = Binomic.builder().config(config).handle(onK, name -> {
                 attempts.put(name, TaskContext.current().attempt());
                 runs.merge(name, 1, Integer::sum);
                 return null;
             }).build().start()) {
            worker.startWorker();
            // the queue levels in use include 3, whose stream is a string
            redis.call("SADD", "binomic:{" + ql + "}:stream:levels", "3");
            redis.call("SET", "binomic:{" + ql + "}:stream:p3", "notastream");
            Thread.sleep(1500); // the worker reads the set of levels at most once a second

            for (int p : new int[] {5, 8}) {
                producer.submit(onL, ql + "-p" + p, SubmitOptions.builder().priority(p).build());
            }
            long submitted = System.nanoTime();
            for (int p : new int[] {5, 8}) {
                producer.submit(onK, qk + "-p" + p, SubmitOptions.builder().priority(p).build());
            }
            Await.until(PROMPTLY, () -> attempts.containsKey(qk + "-p5") && attempts.containsKey(qk + "-p8"),
                    () -> "the healthy queue's jobs did not run within " + PROMPTLY + " (lease " + LEASE + "): " + attempts);
            System.out.println("BROKEN QUEUE: healthy queue's jobs ran " + Duration.ofNanos(System.nanoTime() - submitted).toMillis()
                    + " ms after submission");

            redis.call("DEL", "binomic:{" + ql + "}:stream:p3");
            producer.submit(onL, ql + "-p3", SubmitOptions.builder().priority(3).build());
            Await.until(Duration.ofSeconds(10), () -> attempts.keySet().containsAll(
                    List.of(ql + "-p3", ql + "-p5", ql + "-p8")), () -> "the broken queue's jobs never all ran: " + attempts);
            Thread.sleep(LEASE.toMillis() / 2); // anything lost and reclaimed would run again (as a later attempt) about now
            for (String job : List.of(qk + "-p5", qk + "-p8", ql + "-p3", ql + "-p5", ql + "-p8")) {
                assertEquals(1, attempts.get(job), job + " ran as attempt " + attempts.get(job) + ": " + attempts);
                assertEquals(1, runs.get(job), job + " ran " + runs.get(job) + " times");
            }
        }
    }

    /**
     * A queue's stream replaced by another type while its jobs run: their outcomes cannot be written,
     * and a worker whose outcomes are stuck takes no new work. It used to wait, every queue with it,
     * until the key was repaired; the broker answering other calls, those outcomes are given up (their
     * jobs return by reclaim once the queue is repaired) and the other queues go on.
     */
    @Test
    void aStreamReplacedUnderRunningJobsDoesNotHoldTheOtherQueuesUntilItIsRepaired() throws Exception {
        String suffix = suffix();
        String qa = "qa-" + suffix;
        String qb = "qb-" + suffix;
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        BinomicConfig config = config(4, qa, qb);
        Task<String, Void> onA = Task.builder("work", String.class).queue(qa).maxAttempts(1).build();
        Task<String, Void> onB = Task.builder("work", String.class).queue(qb).maxAttempts(1).build();
        CountDownLatch bRunning = new CountDownLatch(3);
        try (Binomic producer = Binomic.builder().config(config).build().start();
             Binomic worker = Binomic.builder().config(config).handle(onA, name -> {
                 if (name.startsWith(qb) || name.equals(qa + "-0")) {
                     bRunning.countDown();
                     Thread.sleep(1000);
                 }
                 attempts.merge(name, TaskContext.current().attempt(), (a, b) -> a * 100 + b);
                 return null;
             }).build().start()) {
            Worker running = worker.startWorker();
            List<String> renewalFailures = new CopyOnWriteArrayList<>();
            Handler renewals = capture("io.binomic.core.internal.worker.LeaseKeeper", "lease renewal failed",
                    renewalFailures);
            producer.submit(onB, qb + "-1");
            producer.submit(onB, qb + "-2");
            producer.submit(onA, qa + "-0"); // ends with qb's: its outcome shares their refused batch
            assertEquals(true, bRunning.await(5, TimeUnit.SECONDS), "qb's jobs and qa-0 started");
            // in one step, so that no settle finds the key missing: the stream becomes a string under its running jobs
            redis.call("EVAL", "redis.call('RENAME', KEYS[1], KEYS[2]); redis.call('SET', KEYS[1], 'notastream'); return 1", "2",
                    "binomic:{" + qb + "}:stream", "binomic:{" + qb + "}:stream.bak");
            Thread.sleep(1500); // their outcomes fail to be written now
            long submitted = System.nanoTime();
            producer.submit(onA, qa + "-1");

            Await.until(Duration.ofSeconds(25), () -> attempts.containsKey(qa + "-1"),
                    () -> "the healthy queue's job did not run while the other queue stayed broken: " + attempts + "; "
                            + running.health());
            System.out.println("BROKEN QUEUE: a healthy queue's job ran " + Duration.ofNanos(System.nanoTime() - submitted).toMillis()
                    + " ms after submission, the other queue's stream replaced under its running jobs");
            assertEquals(1, attempts.get(qa + "-1"));
            assertEquals(1, attempts.get(qa + "-0"));
            // qa-0's outcome was written with the first send of the batch; sent again alone after the
            // split, it is found settled: its own earlier write, not a delivery reclaimed from this worker
            assertEquals(0, running.counters().staleSettlements(), "outcomes counted stale: " + running.counters());
            // renewals fail four times a second while qb's deliveries are held: logged once, not each time
            Logger.getLogger("io.binomic.core.internal.worker.LeaseKeeper").removeHandler(renewals);
            assertEquals(true, renewalFailures.size() <= 2, renewalFailures.size() + " renewal failures logged: " + renewalFailures);
        }
    }

    /** A worker starting while one of its queues' stream is a string starts, serves the others, and that one once repaired. */
    @Test
    void aWorkerStartsAndServesItsOtherQueuesWhileOneQueueStreamHasTheWrongType() throws Exception {
        String suffix = suffix();
        String qa = "qa-" + suffix;
        String qb = "qb-" + suffix;
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        redis.call("SET", "binomic:{" + qb + "}:stream", "notastream");
        BinomicConfig config = config(4, qa, qb);
        Task<String, Void> onA = Task.builder("work", String.class).queue(qa).maxAttempts(1).build();
        Task<String, Void> onB = Task.builder("work", String.class).queue(qb).maxAttempts(1).build();
        try (Binomic producer = Binomic.builder().config(config).build().start();
             Binomic worker = Binomic.builder().config(config).handle(onA, name -> {
                 attempts.merge(name, TaskContext.current().attempt(), (a, b) -> a * 100 + b);
                 return null;
             }).build().start()) {
            worker.startWorker();
            producer.submit(onA, qa + "-1");
            Await.until(PROMPTLY, () -> attempts.containsKey(qa + "-1"), () -> "the healthy queue's job did not run: " + attempts);

            redis.call("DEL", "binomic:{" + qb + "}:stream");
            producer.submit(onB, qb + "-1");
            Await.until(Duration.ofSeconds(10), () -> attempts.containsKey(qb + "-1"), () -> "the repaired queue's job never ran: " + attempts);
            assertEquals(Map.of(qa + "-1", 1, qb + "-1", 1), attempts, "each job ran once, as attempt 1");
        }
    }

    @Test
    void aQueueStreamOfTheWrongTypeDoesNotStopTheOtherQueuesOfAPlainFetch() throws Exception {
        String suffix = suffix();
        String qa = "qa-" + suffix;
        String qb = "qb-" + suffix;
        String qc = "qc-" + suffix;
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        BinomicConfig config = config(20, qa, qb, qc);
        Task<String, Void> onA = Task.builder("work", String.class).queue(qa).maxAttempts(1).build();
        Task<String, Void> onB = Task.builder("work", String.class).queue(qb).maxAttempts(1).build();
        try (Binomic producer = Binomic.builder().config(config).build().start();
             Binomic worker = Binomic.builder().config(config).handle(onA, name -> {
                 attempts.merge(name, TaskContext.current().attempt(), (a, b) -> a * 100 + b); // a second run shows
                 return null;
             }).build().start()) {
            worker.startWorker();
            // no priorities anywhere: one XREADGROUP reads every queue, and one stream is a string
            redis.call("DEL", "binomic:{" + qb + "}:stream");
            redis.call("SET", "binomic:{" + qb + "}:stream", "notastream");
            Thread.sleep(500);
            producer.submit(onA, qa + "-1");
            Await.until(PROMPTLY, () -> attempts.containsKey(qa + "-1"),
                    () -> "the healthy queue's job did not run within " + PROMPTLY + " (lease " + LEASE + "): " + attempts);

            redis.call("DEL", "binomic:{" + qb + "}:stream");
            producer.submit(onB, qb + "-1");
            Await.until(Duration.ofSeconds(10), () -> attempts.containsKey(qb + "-1"), () -> "the repaired queue's job never ran: " + attempts);
            Thread.sleep(LEASE.toMillis() / 2);
            assertEquals(Map.of(qa + "-1", 1, qb + "-1", 1), attempts, "each job ran once, as attempt 1");
        }
    }

    /**
     * A broken low priority level under a busy high one: a fetch filled by the high level never
     * reaches the broken one, and was taken as "works again", so the queue was logged failing and
     * recovered over and over while nothing had changed. It is logged once, and recovers only once
     * a fetch has read every level.
     */
    @Test
    void aBrokenLowPriorityLevelUnderABusyHighOneIsLoggedOnceNotAsFlappingBetweenFailingAndWorking() throws Exception {
        String queue = "qp-" + suffix();
        Task<Integer, Void> work = Task.builder("work", Integer.class).queue(queue).maxAttempts(1).build();
        List<String> messages = new CopyOnWriteArrayList<>();
        Handler capture = capture("io.binomic.redis.internal.RedisBroker", queue, messages);
        AtomicInteger ran = new AtomicInteger();
        BinomicConfig config = config(2, queue);
        try (Binomic producer = Binomic.builder().config(config).build().start();
             Binomic worker = Binomic.builder().config(config).handle(work, n -> {
                 Thread.sleep(20);
                 ran.incrementAndGet();
                 return null;
             }).build().start()) {
            // level 8 busy (far more jobs than the two slots), level 3 a string
            for (int n = 0; n < 300; n++) {
                producer.submit(work, n, SubmitOptions.builder().priority(8).build());
            }
            redis.call("SADD", "binomic:{" + queue + "}:stream:levels", "3");
            redis.call("SET", "binomic:{" + queue + "}:stream:p3", "notastream");
            worker.startWorker();
            Await.until(Duration.ofSeconds(20), () -> ran.get() >= 100, () -> "only " + ran.get() + " jobs ran");
            long failing = messages.stream().filter(m -> m.contains("fetching from queue") && !m.contains("works again")).count();
            long recovered = messages.stream().filter(m -> m.contains("works again")).count();
            assertEquals(0, recovered, "a broken level reported as working again while still broken: " + messages);
            assertEquals(1, failing, "the broken level logged more than once within 30 s: " + messages);
        } finally {
            Logger.getLogger("io.binomic.redis.internal.RedisBroker").removeHandler(capture);
        }
    }

    /**
     * The fix the error names for a set of levels of the wrong type is to delete it: the messages
     * already on its level streams were then read by nothing (the set lists the levels read), even
     * by a worker started afterwards, until a message of the same level was submitted. The levels
     * whose streams exist are found again.
     */
    @Test
    void messagesOfAPriorityLevelRunAfterTheSetOfLevelsIsDeletedAsItsErrorSays() throws Exception {
        String queue = "qs-" + suffix();
        Task<String, Void> work = Task.builder("work", String.class).queue(queue).maxAttempts(1).build();
        Map<String, Integer> attempts = new ConcurrentHashMap<>();
        BinomicConfig config = config(4, queue);
        try (Binomic producer = Binomic.builder().config(config).build().start()) {
            for (int n = 0; n < 3; n++) {
                producer.submit(work, "p8-" + n, SubmitOptions.builder().priority(8).build());
            }
            producer.submit(work, "default");
            redis.call("DEL", "binomic:{" + queue + "}:stream:levels");
            redis.call("SET", "binomic:{" + queue + "}:stream:levels", "broken");
            redis.call("DEL", "binomic:{" + queue + "}:stream:levels"); // as the error's fix says
            try (Binomic worker = Binomic.builder().config(config).handle(work, name -> {
                attempts.merge(name, TaskContext.current().attempt(), (a, b) -> a * 100 + b);
                return null;
            }).build().start()) {
                worker.startWorker();
                Await.until(Duration.ofSeconds(15), () -> attempts.size() == 4,
                        () -> "not every job ran after the set of levels was deleted: " + attempts);
                assertEquals(Map.of("p8-0", 1, "p8-1", 1, "p8-2", 1, "default", 1), attempts, "each job ran once, as attempt 1");
            }
        }
    }

    /** Adds to {@code into} each record of logger {@code name} whose text or parameters mention {@code mentioning}. */
    private static Handler capture(String name, String mentioning, List<String> into) {
        Handler handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                String text = record.getMessage() + " " + Arrays.toString(record.getParameters());
                if (text.contains(mentioning)) {
                    into.add(text);
                }
            }

            @Override
            public void flush() { }

            @Override
            public void close() { }
        };
        Logger.getLogger(name).addHandler(handler);
        return handler;
    }
}
