package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.TaskHandler;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.core.WorkerHealth;
import io.binomic.it.TestApp.Job;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Configurations users hit on day one, each on a
 * real Redis: a worker on several queues, CPU-bound handlers next to a second live worker, and
 * tasks finishing while Redis is down. Every execution is counted in a {@link Ledger}.
 */
class DeliveryTrustIT {
    private final RedisServer redis = RedisServer.shared();
    private String queue;
    private Ledger ledger;

    @BeforeEach
    void freshQueue() {
        queue = "trust-" + UUID.randomUUID().toString().substring(0, 8);
        ledger = new Ledger(redis.host(), redis.port(), queue);
    }

    private static List<Job> jobs(int count, long millis, boolean cpuBound) {
        return IntStream.range(0, count).mapToObj(n -> new Job(n, millis, 0, cpuBound)).toList();
    }

    /** The README's {@code --queues mail,payments} with one slot: XREADGROUP COUNT 1 over two streams returns two. */
    @Test
    void aWorkerOnTwoQueuesWithConcurrencyOneRunsEveryMessageOneAtATime() {
        String mailQueue = queue + "-mail";
        String paymentsQueue = queue + "-payments";
        AtomicInteger runningNow = new AtomicInteger();
        AtomicInteger mostAtOnce = new AtomicInteger();
        AtomicInteger ran = new AtomicInteger();
        Task<Integer, Void> mail = Task.builder("mail", Integer.class).queue(mailQueue).build();
        Task<Integer, Void> payment = Task.builder("payment", Integer.class).queue(paymentsQueue).build();
        TaskHandler<Integer, Void> counting = counting(runningNow, mostAtOnce, ran);
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(mailQueue, paymentsQueue).concurrency(1)
                        .pollTimeout(Duration.ofMillis(200)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        try (Binomic binomic = Binomic.builder().config(config).handle(mail, counting).handle(payment, counting).build().start()) {
            binomic.submitAll(mail, IntStream.range(0, 10).boxed().toList());
            binomic.submitAll(payment, IntStream.range(0, 10).boxed().toList());

            Worker worker = binomic.startWorker();

            Await.until(Duration.ofSeconds(30), () -> ran.get() == 20,
                    () -> ran.get() + " of 20 ran; " + worker.health() + "; " + binomic.queueStats(mailQueue) + " " + binomic.queueStats(paymentsQueue));
            assertEquals(1, mostAtOnce.get(), "tasks running at once with concurrency 1");
            assertTrue(worker.health().consuming(), worker.health().toString());
        }
    }

    private static TaskHandler<Integer, Void> counting(AtomicInteger runningNow, AtomicInteger mostAtOnce, AtomicInteger ran) {
        return n -> {
            mostAtOnce.accumulateAndGet(runningNow.incrementAndGet(), Math::max);
            Thread.sleep(20);
            runningNow.decrementAndGet();
            ran.incrementAndGet();
            return null;
        };
    }

    /**
     * Virtual threads are not time-sliced: handlers spinning on every carrier used to starve the
     * lease loop, and a second, live worker reclaimed the running tasks (3 of 4 ran twice).
     */
    @Test
    void cpuBoundHandlersOnEveryCarrierDoNotLoseTheirLeasesToASecondWorker() {
        Duration lease = Duration.ofSeconds(1);
        int count = 2 * Runtime.getRuntime().availableProcessors();
        long spinMillis = 3 * lease.toMillis() + 500;
        try (TestApp.App spinning = TestApp.client(redis, queue, lease, Duration.ofMillis(100))) {
            spinning.binomic().startWorker();
            spinning.binomic().submitAll(spinning.job(), jobs(count, spinMillis, true));
            Await.until(Duration.ofSeconds(20), () -> !ledger.runs().isEmpty(), () -> ledger.runs().toString());
            try (ChildWorker second = ChildWorker.start(redis, queue, lease, Duration.ofMillis(100))) {
                Await.until(Duration.ofSeconds(60), () -> ledger.done().size() == count,
                        () -> ledger.runs() + "; second worker's output:\n" + second.log());
                RedisServer.sleep(3 * lease.toMillis()); // room for a wrongful second run to start
                assertEquals(count, ledger.totalRuns(), "runs per job: " + ledger.runs() + "; second worker's output:\n" + second.log());
            }
        }
    }

    /**
     * Tasks that finish while Redis is down keep their outcomes in the worker and write them when it
     * is back: with an outage shorter than the lease, no task runs twice. (Before, with Redis down 65 s,
     * the worker gave up acks after five tries and their tasks stayed pending, to run again after reclaim.)
     */
    @Test
    void outcomesOfTasksFinishedDuringARedisOutageAreWrittenAfterItAndNothingRunsTwice() {
        // Eight slots of 1 s tasks: eight done before the outage, at most eight more with outcomes held
        // through it, and at least eight still queued for the fetch that resumes after it.
        int count = 32;
        Duration lease = Duration.ofSeconds(120);
        // Past the 30 s after which the old worker gave acks up, and past the five failed settle calls
        // after which a batch is split and given up if the broker answers other calls, as it does again
        // at the restart: with Redis down each call fails after the client's 20 retries, 125 to 500 ms
        // apart (RedissonSetup), some 7.5 s, so the fifth fails about 40 s into the outage.
        Duration outage = Duration.ofSeconds(45);
        try (RedisServer own = RedisServer.startNew()) {
            Task<Job, Void> job = TestApp.job(queue, Duration.ofMillis(100));
            // the ledger stays on the shared server
            try (Binomic app = Binomic.builder().config(TestApp.config(own.url(), queue, lease)).handle(job, TestApp.handler(ledger))
                    .build().start()) {
                app.submitAll(job, jobs(count, 1000, false));
                Worker worker = app.startWorker();
                // Every slot busy with a 1 s task: they all finish while Redis is down.
                Await.until(Duration.ofSeconds(30), () -> ledger.done().size() >= 8 && worker.counters().inFlight() == 8,
                        () -> ledger.done().size() + " done, " + worker.counters().inFlight() + " running");

                own.stop();
                long stoppedAt = System.nanoTime();
                AtomicReference<WorkerHealth> duringOutage = new AtomicReference<>();
                Await.until(Duration.ofSeconds(20), () -> {
                    duringOutage.set(worker.health());
                    return duringOutage.get().state() == WorkerHealth.State.BROKER_UNREACHABLE;
                }, () -> "health during the outage: " + duringOutage.get());
                int held = 0;
                while (System.nanoTime() - stoppedAt < outage.toNanos()) {
                    held = Math.max(held, worker.health().pendingSettlements());
                    RedisServer.sleep(200);
                }
                own.start();

                Await.until(Duration.ofSeconds(60), () -> ledger.done().size() == count,
                        () -> ledger.done().size() + " of " + count + " done; " + worker.health());
                Await.until(Duration.ofSeconds(10), () -> app.queueStats(queue).pending() == 0, () -> app.queueStats(queue).toString());
                assertTrue(held > 0, "outcomes were held during the outage: " + held);
                assertEquals(count, ledger.totalRuns(), "no task ran twice: " + ledger.runs());
                assertEquals(0, worker.counters().staleSettlements());
                Await.until(Duration.ofSeconds(10), () -> worker.health().consuming(), () -> worker.health().toString());
            }
        }
    }

    /**
     * Redis frozen (not down): reads sent meanwhile wait in the socket and run when it thaws, after
     * the client gave up on them, so they hand entries to the worker that it never receives. Before,
     * those sat pending a whole lease and then ran as one attempt more than they had (with
     * {@code maxAttempts(1)}: dead-lettered, never run). Now the worker looks for its own pending
     * entries once fetching works again and runs them at once, as the attempt they are.
     */
    @Test
    void entriesHandedOutByReadsWhoseRepliesWereLostWhileRedisHungRunAtOnceAsTheirOwnAttempt() {
        int count = 40;
        Duration lease = Duration.ofSeconds(40);
        try (RedisServer own = RedisServer.startNew()) {
            Task<Job, Void> job = TestApp.job(queue, Duration.ofMillis(100));
            BinomicConfig base = TestApp.config(own.url(), queue, lease);
            BinomicConfig config = BinomicConfig.builder().brokerUrl(own.url()).schedulePeriodicTasks(false)
                    .taskDefaults(base.taskDefaults())
                    .worker(WorkerConfig.builder().queues(queue).concurrency(4).leaseTimeout(lease).pollTimeout(Duration.ofMillis(200))
                            .reclaimInterval(Duration.ofMillis(500)).shutdownGrace(Duration.ofSeconds(2)).build())
                    .build();
            try (Binomic app = Binomic.builder().config(config).handle(job, TestApp.handler(ledger)).build().start()) {
                app.submitAll(job, jobs(count, 300, false));
                Worker worker = app.startWorker();
                Await.until(Duration.ofSeconds(30), () -> ledger.done().size() >= 8, () -> ledger.done().size() + " done");

                own.freezeFor(Duration.ofSeconds(12));
                long thawed = System.nanoTime();

                Await.until(Duration.ofSeconds(25), () -> ledger.done().size() == count,
                        () -> ledger.done().size() + " of " + count + " done; " + app.queueStats(queue) + "; " + worker.health());
                Duration took = Duration.ofNanos(System.nanoTime() - thawed);
                assertTrue(took.compareTo(lease) < 0, "everything ran well within the lease after the thaw: " + took);
                assertEquals(count, ledger.totalRuns(), "runs per job: " + ledger.runs());
                assertTrue(ledger.attempts().stream().allMatch(a -> a.endsWith(":1")), "every job ran as attempt 1: " + ledger.attempts());
                assertEquals(0, app.queueStats(queue).deadLetters());
            }
        }
    }
}
