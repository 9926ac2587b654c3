package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.BrokerCapabilities;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Rate and concurrency limits across worker JVMs on a real Redis: the rate limit's accuracy over
 * 30 s with 4 workers, no concurrency slot leaked when a worker holding slots is SIGKILLed, a
 * queue limit set from the CLI, and a unique job whose worker is SIGKILLed.
 * Each prints a {@code LIMITS ...} line.
 */
class LimitsIT {
    /**
     * What a 1 s window may hold beyond the limit, measured at the handlers. The limiter admits at
     * most {@code permits + burst} starts in any window of one period, on Redis' clock: GCRA over the
     * actual starts with a tolerance of the burst plus one interval, the jitter allowance that keeps
     * a start a few milliseconds late from costing the next one its turn; here burst 1, so +1. The
     * rest is measurement: a handler records its start a little after its admission (a fetch, a
     * thread start), by a varying lag on a loaded machine: +4.
     */
    static final int WINDOW_TOLERANCE = 5;

    private static RedisServer redis;

    @BeforeAll
    static void startRedis() {
        redis = RedisServer.startNew();
    }

    @AfterAll
    static void stopRedis() {
        redis.close();
    }

    private static List<ChildWorker> workers(int n, String queue, String kind, int limit, Duration lease) {
        List<ChildWorker> workers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            workers.add(ChildWorker.start(LimitedApp.class, List.of(redis.host(), Integer.toString(redis.port()), queue, kind,
                    Integer.toString(limit), Long.toString(lease.toMillis()))));
        }
        return workers;
    }

    private static Binomic producer(String queue) {
        return Binomic.builder().config(LimitedApp.config(redis.url(), queue, Duration.ofSeconds(5))).build().start();
    }

    @Test
    void fourWorkerJvmsTogetherStartNoMoreThanTheRateLimitInAnyOneSecondWindow() throws Exception {
        String queue = "rate-" + UUID.randomUUID().toString().substring(0, 8);
        int perSecond = 50;
        List<ChildWorker> workers = workers(4, queue, "rate", perSecond, Duration.ofSeconds(5));
        try (Binomic producer = producer(queue)) {
            Task<LimitedApp.Work, Void> task = LimitedApp.task(queue, "rate", perSecond);
            // Warm the worker JVMs up (class loading and the first connections would show as start jitter), then measure.
            producer.submitAll(task, IntStream.range(0, 40).mapToObj(n -> new LimitedApp.Work(-1 - n, 1)).toList());
            long warm = System.currentTimeMillis() + 20_000;
            while (LimitedApp.runs(redis, queue).stream().filter(r -> r.end() >= 0).count() < 40 && System.currentTimeMillis() < warm) {
                Thread.sleep(100);
            }
            redis.call("DEL", LimitedApp.logKey(queue));
            Thread.sleep(1000);
            producer.submitAll(task, IntStream.range(0, 950).mapToObj(n -> new LimitedApp.Work(n, 5)).toList());
            long deadline = System.currentTimeMillis() + 60_000;
            long first = Long.MAX_VALUE;
            while (System.currentTimeMillis() < deadline) {
                List<LimitedApp.Run> runs = LimitedApp.runs(redis, queue);
                if (!runs.isEmpty()) {
                    first = runs.stream().mapToLong(LimitedApp.Run::start).min().orElseThrow();
                    if (System.currentTimeMillis() > first + 16_000) {
                        break;
                    }
                }
                Thread.sleep(500);
            }
            List<Long> starts = LimitedApp.runs(redis, queue).stream().map(LimitedApp.Run::start).sorted().toList();
            long t0 = first;
            // 15 s of starts: enough 1 s windows for the bound (the CI budget is 15 minutes).
            long inFifteen = starts.stream().filter(s -> s >= t0 && s < t0 + 15_000).count();
            int maxWindow = 0;
            for (int i = 0, j = 0; i < starts.size(); i++) {
                while (j < starts.size() && starts.get(j) < starts.get(i) + 1000) {
                    j++;
                }
                maxWindow = Math.max(maxWindow, j - i);
            }
            int[] perTenth = new int[200];
            for (long st : starts) {
                int b = (int) ((st - t0) / 100);
                if (b >= 0 && b < perTenth.length) {
                    perTenth[b]++;
                }
            }
            System.out.println("LIMITS starts per 100 ms from the first: " + java.util.Arrays.toString(perTenth));
            var stats = broker(queue).stats(queue);
            System.out.println("LIMITS at the end: " + stats + " now-t0=" + (System.currentTimeMillis() - t0) + " delayed dues-t0: "
                    + ((List<?>) redis.call("ZRANGE", "binomic:{" + queue + "}:delayed", "0", "-1", "WITHSCORES")).stream()
                            .filter(o -> String.valueOf(o).matches("\\d+")).map(o -> Long.parseLong(String.valueOf(o)) - t0).limit(50).toList());
            Set<Integer> workersUsed = LimitedApp.runs(redis, queue).stream().map(r -> (int) r.pid()).collect(Collectors.toSet());
            System.out.println("LIMITS rate limit=" + perSecond + "/s workers=4 starts_in_15s=" + inFifteen + " max_in_any_1s_window="
                    + maxWindow + " tolerance=" + WINDOW_TOLERANCE + " worker_jvms_that_ran=" + workersUsed.size());
            // Never more than the limit lets through; how close to it the starts come is a benchmark figure
            // (-Dbench.only=limits), which a loaded machine lowers: here only that the limiter does not starve the queue.
            assertTrue(inFifteen <= 15 * perSecond + 15, "15 s at 50/s start at most 765, were " + inFifteen);
            assertTrue(inFifteen >= 15 * perSecond / 2, "15 s at 50/s start at least half of 750, were " + inFifteen);
            assertTrue(maxWindow <= perSecond + WINDOW_TOLERANCE, "at most " + perSecond + " (+" + WINDOW_TOLERANCE
                    + ") starts in any 1 s window, saw " + maxWindow);
            assertTrue(workersUsed.size() >= 2, "the limit held across several worker JVMs, but only " + workersUsed.size() + " ran jobs");
        } finally {
            workers.forEach(ChildWorker::close);
        }
    }

    @Test
    void aWorkerJvmKilledWhileHoldingSlotsLeaksNoneAndTheLimitHoldsThroughout() throws Exception {
        String queue = "slots-" + UUID.randomUUID().toString().substring(0, 8);
        int slots = 3;
        int jobs = 24;
        Duration lease = Duration.ofSeconds(2);
        List<ChildWorker> workers = workers(2, queue, "slots", slots, lease);
        try (Binomic producer = producer(queue)) {
            Task<LimitedApp.Work, Void> task = LimitedApp.task(queue, "slots", slots);
            producer.submitAll(task, IntStream.range(0, jobs).mapToObj(n -> new LimitedApp.Work(n, 400)).toList());
            // Kill the worker JVM that runs the most jobs, at a moment slots are recorded: an admission
            // that finds the limit unable to bind records none, so only some moments test a leak.
            long victim = -1;
            long killedAt = 0;
            int heldAtKill = 0;
            long deadline = System.currentTimeMillis() + 30_000;
            while (victim < 0 && System.currentTimeMillis() < deadline) {
                var open = LimitedApp.runs(redis, queue).stream().filter(r -> r.end() < 0)
                        .collect(Collectors.groupingBy(LimitedApp.Run::pid, Collectors.counting()));
                var most = open.entrySet().stream().max(java.util.Map.Entry.comparingByValue());
                if (most.isPresent() && LimitedApp.runs(redis, queue).size() >= 4) {
                    heldAtKill = BrokerCapabilities.flowLimits(broker(queue)).slotsHeld(queue, "t:limited");
                    if (heldAtKill >= 1) {
                        victim = most.get().getKey();
                    }
                }
                Thread.sleep(20);
            }
            assertTrue(victim > 0, "a worker ran jobs while slots were recorded");
            ChildWorker dying = null;
            for (ChildWorker w : workers) {
                if (w.pid() == victim) {
                    dying = w;
                }
            }
            dying.kill9();
            killedAt = System.currentTimeMillis();

            Set<Integer> done = new TreeSet<>();
            deadline = System.currentTimeMillis() + 60_000;
            while (done.size() < jobs && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
                done = LimitedApp.runs(redis, queue).stream().filter(r -> r.end() >= 0).map(LimitedApp.Run::n)
                        .collect(Collectors.toCollection(TreeSet::new));
            }
            assertEquals(jobs, done.size(), "every job completed after the kill: " + done);
            int heldAtEnd = -1;
            for (int i = 0; i < 50 && heldAtEnd != 0; i++) {
                heldAtEnd = BrokerCapabilities.flowLimits(broker(queue)).slotsHeld(queue, "t:limited");
                Thread.sleep(100);
            }
            // Concurrent runs from the log; a run the kill cut short ended at the kill.
            long cut = killedAt;
            long victimPid = victim;
            List<long[]> events = new ArrayList<>();
            for (LimitedApp.Run r : LimitedApp.runs(redis, queue)) {
                long end = r.end() >= 0 ? r.end() : (r.pid() == victimPid ? cut : Long.MAX_VALUE);
                events.add(new long[] {r.start(), 1});
                events.add(new long[] {end, -1});
            }
            events.sort(Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
            int running = 0;
            int maxRunning = 0;
            for (long[] e : events) {
                running += (int) e[1];
                maxRunning = Math.max(maxRunning, running);
            }
            System.out.println("LIMITS concurrency limit=" + slots + " workers=2 jobs=" + jobs + " slots_held_at_kill=" + heldAtKill
                    + " max_running=" + maxRunning + " slots_held_at_end=" + heldAtEnd + " completed=" + done.size());
            assertTrue(maxRunning <= slots, "never more than " + slots + " running at once, saw " + maxRunning);
            assertEquals(0, heldAtEnd, "no slot leaked: the dead worker's were released when its deliveries were reclaimed and settled");
            assertTrue(heldAtKill >= 1, "the killed worker held slots");
        } finally {
            workers.forEach(ChildWorker::close);
            if (broker != null) {
                broker.close();
                broker = null;
            }
        }
    }

    @Test
    void aQueueLimitSetFromTheCliHoldsAcrossWorkerJvmsAndItsSlotsAreAllReleased() throws Exception {
        String queue = "qlimit-" + UUID.randomUUID().toString().substring(0, 8);
        int slots = 2;
        int jobs = 12;
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        int exit = io.binomic.core.internal.cli.BinomicCli.run(new String[] {"queue", "limit", queue, "--concurrency", Integer.toString(slots),
                "--broker", redis.url(), "--create"}, new java.io.PrintStream(out, true), System.err);
        assertEquals(0, exit, out.toString());
        assertEquals("limits of queue " + queue + " on broker " + redis.url() + ": concurrency 2\n", out.toString());
        // workers whose task declares no limit: only the queue's, read from Redis, holds them back
        List<ChildWorker> workers = workers(2, queue, "none", 0, Duration.ofSeconds(5));
        try (Binomic producer = producer(queue)) {
            producer.submitAll(LimitedApp.task(queue, "none", 0), IntStream.range(0, jobs).mapToObj(n -> new LimitedApp.Work(n, 300)).toList());
            long deadline = System.currentTimeMillis() + 60_000;
            List<LimitedApp.Run> runs = List.of();
            while (System.currentTimeMillis() < deadline) {
                runs = LimitedApp.runs(redis, queue);
                if (runs.stream().filter(r -> r.end() >= 0).count() >= jobs) {
                    break;
                }
                Thread.sleep(200);
            }
            assertEquals(jobs, runs.stream().filter(r -> r.end() >= 0).map(LimitedApp.Run::n).distinct().count(), "every job ran: " + runs);
            List<long[]> events = new ArrayList<>();
            for (LimitedApp.Run r : runs) {
                events.add(new long[] {r.start(), 1});
                events.add(new long[] {r.end(), -1});
            }
            events.sort(Comparator.<long[]>comparingLong(e -> e[0]).thenComparingLong(e -> e[1]));
            int running = 0;
            int maxRunning = 0;
            for (long[] e : events) {
                running += (int) e[1];
                maxRunning = Math.max(maxRunning, running);
            }
            int heldAtEnd = -1;
            for (int i = 0; i < 50 && heldAtEnd != 0; i++) {
                heldAtEnd = BrokerCapabilities.flowLimits(broker(queue)).slotsHeld(queue, "q");
                Thread.sleep(100);
            }
            long pids = runs.stream().map(LimitedApp.Run::pid).distinct().count();
            System.out.println("LIMITS queue concurrency limit=" + slots + " (set by the CLI) workers=2 jobs=" + jobs + " max_running="
                    + maxRunning + " worker_jvms_that_ran=" + pids + " slots_held_at_end=" + heldAtEnd);
            assertTrue(maxRunning <= slots, "never more than " + slots + " running at once, saw " + maxRunning);
            assertEquals(slots, maxRunning, "the limit allows " + slots + " at once, and 12 jobs of 300 ms on two workers use them");
            assertEquals(0, heldAtEnd, "every slot released");
        } finally {
            workers.forEach(ChildWorker::close);
            if (broker != null) {
                broker.close();
                broker = null;
            }
        }
    }

    @Test
    void aQueueRateLimitRaisedFromTheCliAppliesToTheJobsAlreadyWaiting() throws Exception {
        String queue = "qraise-" + UUID.randomUUID().toString().substring(0, 8);
        int jobs = 40;
        assertEquals(0, cli("queue", "limit", queue, "--rate", "1/2s", "--broker", redis.url(), "--create"));
        // a worker whose task declares no limit: only the queue's, read from Redis, holds it back
        Task<LimitedApp.Work, Void> task = LimitedApp.task(queue, "none", 0);
        try (Binomic producer = producer(queue);
             Binomic worker = Binomic.builder().config(LimitedApp.config(redis.url(), queue, Duration.ofSeconds(5)))
                     .handle(task, LimitedApp.handler(redis.host(), redis.port(), queue)).build().start()) {
            worker.startWorker();
            producer.submitAll(task, IntStream.range(0, jobs).mapToObj(n -> new LimitedApp.Work(n, 1)).toList());
            // the first starts at 1 per 2 s: by then the rest wait their turns, spaced 2 s apart
            Await.until(Duration.ofSeconds(30), () -> LimitedApp.runs(redis, queue).size() >= 3,
                    () -> "started: " + LimitedApp.runs(redis, queue).size());
            int before = LimitedApp.runs(redis, queue).size();
            long raised = System.currentTimeMillis();
            assertEquals(0, cli("queue", "limit", queue, "--rate", "100/s", "--broker", redis.url()));
            // at the old rate the other 37 or so would take over a minute: 20 s allows 11
            Await.until(Duration.ofSeconds(20), () -> LimitedApp.runs(redis, queue).size() >= jobs,
                    () -> LimitedApp.runs(redis, queue).size() + " of " + jobs + " started 20 s after the rate went from 1/2s to 100/s;"
                            + " the old rate allows " + (before + 11));
            long last = LimitedApp.runs(redis, queue).stream().mapToLong(LimitedApp.Run::start).max().orElseThrow();
            System.out.println("LIMITS queue rate raised from 1/2s to 100/s with " + (jobs - before) + " of " + jobs
                    + " jobs waiting: all started " + (last - raised) + " ms after the raise");
        }
    }

    private static int cli(String... args) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        int exit = io.binomic.core.internal.cli.BinomicCli.run(args, new java.io.PrintStream(out, true), System.err);
        System.out.print(out);
        return exit;
    }

    @Test
    void aUniqueJobWhoseWorkerJvmIsKilledMidRunIsRecoveredOnceAndItsKeyGivenBack() throws Exception {
        String queue = "unique-" + UUID.randomUUID().toString().substring(0, 8);
        Duration lease = Duration.ofSeconds(2);
        List<ChildWorker> workers = workers(2, queue, "unique", 600, lease);
        try (Binomic producer = producer(queue)) {
            Task<LimitedApp.Work, Void> task = LimitedApp.task(queue, "unique", 600);
            UUID first = producer.submit(task, new LimitedApp.Work(7, 3_000)).id();
            long victim = -1;
            long deadline = System.currentTimeMillis() + 30_000;
            while (victim < 0 && System.currentTimeMillis() < deadline) {
                victim = LimitedApp.runs(redis, queue).stream().mapToLong(LimitedApp.Run::pid).findFirst().orElse(-1);
                Thread.sleep(20);
            }
            assertTrue(victim > 0, "the job started");
            for (ChildWorker w : workers) {
                if (w.pid() == victim) {
                    w.kill9();
                }
            }
            assertEquals(first, producer.submit(task, new LimitedApp.Work(7, 3_000)).id(),
                    "while its worker is dead and the job waits for reclaim, a duplicate submit returns the same job");

            deadline = System.currentTimeMillis() + 60_000;
            List<LimitedApp.Run> runs = List.of();
            while (System.currentTimeMillis() < deadline) {
                runs = LimitedApp.runs(redis, queue);
                if (runs.stream().anyMatch(r -> r.end() >= 0)) {
                    break;
                }
                Thread.sleep(100);
            }
            assertEquals(1, runs.stream().filter(r -> r.end() >= 0).count(), "the job completed once, on the surviving worker: " + runs);
            assertEquals(2, runs.size(), "one start cut short by the kill, one complete run: " + runs);

            UUID next = null;
            deadline = System.currentTimeMillis() + 10_000;
            while (System.currentTimeMillis() < deadline) {
                next = producer.submit(task, new LimitedApp.Work(7, 10)).id();
                if (!next.equals(first)) {
                    break;
                }
                Thread.sleep(100); // the key is given back by the settlement, a moment after the handler's end
            }
            System.out.println("LIMITS unique job with its worker SIGKILLed: runs=" + runs.size() + " completed=1 key_given_back="
                    + !first.equals(next));
            assertTrue(!first.equals(next), "once the job ended, its key was given back: a new submit makes a new job, well before the key's 600 s TTL");
        } finally {
            workers.forEach(ChildWorker::close);
        }
    }

    private io.binomic.api.spi.Broker broker;

    private io.binomic.api.spi.Broker broker(String queue) {
        if (broker == null) {
            broker = Brokers.redis(redis);
            broker.start(List.of());
        }
        return broker;
    }
}
