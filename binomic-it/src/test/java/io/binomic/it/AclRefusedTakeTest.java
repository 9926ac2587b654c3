package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.Dashboard;
import io.binomic.core.Worker;
import io.binomic.core.WorkerHealth;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * A worker whose ACL user loses a command its fetch or its lease renewal needs (NOPERM), while Redis answers every
 * other call: as with a refused settle ({@link AclRefusedSettleTest}), its health names what Redis refuses and the
 * grant, it backs off, and once the command is granted back it goes on, each job run once.
 */
class AclRefusedTakeTest {
    private static final Duration REFUSED_FOR = Duration.ofSeconds(3);

    @Test
    void aRefusedFetchIsReportedWithItsGrantAndTheWorkerResumesOnceGranted() throws Exception {
        String queue = "acl-refused-fetch";
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        Task<String, String> task = Task.builder("count-fetched-runs", String.class, String.class).queue(queue)
                .keepStatusFor(Duration.ZERO).build();
        List<String> problems = new ArrayList<>();
        WorkerHealth whileRefused;
        List<String> fetchFailures;
        String workersPage;
        List<Long> ages = new ArrayList<>();
        CapturedCoreLog log = new CapturedCoreLog("io.binomic");
        log.attach();
        try (RedisServer redis = RedisServer.startNew()) {
            AclRedis.createUsers(redis, AclRedis.rules());
            try (Binomic worker = Binomic.builder().config(workerConfig(redis, queue, Duration.ofSeconds(2)))
                    .handle(task, s -> {
                        runs.computeIfAbsent(s, k -> new AtomicInteger()).incrementAndGet();
                        return s;
                    }).build().start();
                 Binomic producer = Binomic.builder().config(producerConfig(redis)).build().start()) {
                Worker running = worker.startWorker();
                producer.submit(task, "before");
                await("the first job is written", () -> runs.containsKey("before") && worker.queueStats(queue).pending() == 0);

                redis.call("ACL", "SETUSER", AclRedis.WORKER, "-xreadgroup");
                await("the worker reports the refusal", () -> !running.health().consuming());
                for (int i = 0; i < 3; i++) {
                    producer.submit(task, "job-" + i);
                }
                // Found by an outside tester: the age went back to 0 s while the refusal went on (a reclaim Redis allowed cleared it).
                long sampleUntil = System.nanoTime() + REFUSED_FOR.toNanos();
                while (System.nanoTime() < sampleUntil) {
                    ages.add(running.health().problem().map(AclRefusedTakeTest::ageSeconds).orElse(-1L));
                    Thread.sleep(100);
                }
                whileRefused = running.health();
                problems.add(whileRefused.problem().orElse("none"));
                try (Dashboard dashboard = worker.dashboard().port(0).start(); HttpClient http = HttpClient.newHttpClient()) {
                    workersPage = http.send(HttpRequest.newBuilder(dashboard.uri().resolve("/workers")).build(),
                            HttpResponse.BodyHandlers.ofString()).body();
                }
                fetchFailures = log.lines().stream().filter(l -> l.contains("xreadgroup")).toList();

                redis.call("ACL", "SETUSER", AclRedis.WORKER, "+xreadgroup");
                await("the jobs ran", () -> runs.size() == 4 && worker.queueStats(queue).pending() == 0
                        && worker.queueStats(queue).ready() == 0);
                await("the worker is healthy again", () -> running.health().consuming());
            }
        } finally {
            log.detach();
        }
        runs.forEach((job, count) -> assertEquals(1, count.get(), "runs of " + job + ": " + runs));
        String problem = problems.getFirst();
        assertTrue(problem.startsWith("Redis refuses fetching (NOPERM) for ")
                && problem.contains("grant ACL SETUSER " + AclRedis.WORKER + " +xreadgroup;"), problem);
        for (int i = 1; i < ages.size(); i++) {
            assertTrue(ages.get(i) >= ages.get(i - 1) && ages.get(i) >= 0, "the refusal's age only grows while it lasts: " + ages);
        }
        assertTrue(ages.getLast() >= REFUSED_FOR.toSeconds() - 1, "counted from the first refusal: " + ages);
        // Found by an outside tester: the dashboard said BROKER_UNREACHABLE where binomic workers says BROKER REFUSED.
        assertTrue(workersPage.contains("<td>BROKER REFUSED: Redis refuses fetching (NOPERM) for "), workersPage);
        assertEquals(1, fetchFailures.size(), "the refusal is logged once, not every retry: " + fetchFailures);
        assertTrue(fetchFailures.getFirst().startsWith("WARNING worker ") && fetchFailures.getFirst().contains(": fetching refused (")
                && fetchFailures.getFirst().contains("grant it: ACL SETUSER " + AclRedis.WORKER + " +xreadgroup;")
                && fetchFailures.getFirst().endsWith("retrying every 2000 ms until it is granted"), fetchFailures.getFirst());
        // Found by an outside tester: the broker logged the refusal a second time, at SEVERE, and its end twice.
        List<String> recoveries = log.lines().stream().filter(l -> l.contains("works again after") || l.contains("fetching again after")).toList();
        assertEquals(1, recoveries.size(), "the end of the refusal is logged once: " + recoveries);
        assertTrue(log.lines().stream().noneMatch(l -> l.startsWith("SEVERE")), log.toString());
    }

    @Test
    void aRefusedLeaseRenewalIsReportedWithItsGrantAndTheJobRunsOnce() throws Exception {
        String queue = "acl-refused-renewal";
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        Task<String, String> task = Task.builder("count-renewed-runs", String.class, String.class).queue(queue)
                .keepStatusFor(Duration.ZERO).build();
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        String problem;
        try (RedisServer redis = RedisServer.startNew()) {
            AclRedis.createUsers(redis, AclRedis.rules());
            try (Binomic worker = Binomic.builder().config(workerConfig(redis, queue, Duration.ofSeconds(1)))
                    .handle(task, s -> {
                        runs.computeIfAbsent(s, k -> new AtomicInteger()).incrementAndGet();
                        started.countDown();
                        release.await();
                        return s;
                    }).build().start();
                 Binomic producer = Binomic.builder().config(producerConfig(redis)).build().start()) {
                Worker running = worker.startWorker();
                producer.submit(task, "long");
                assertTrue(started.await(20, java.util.concurrent.TimeUnit.SECONDS));

                redis.call("ACL", "SETUSER", AclRedis.WORKER, "-xclaim");
                await("the worker reports the refusal", () -> !running.health().consuming());
                problem = running.health().problem().orElse("none");
                Thread.sleep(REFUSED_FOR.toMillis());

                redis.call("ACL", "SETUSER", AclRedis.WORKER, "+xclaim");
                await("the worker is healthy again", () -> running.health().consuming());
                release.countDown();
                await("the job is written", () -> worker.queueStats(queue).pending() == 0 && worker.queueStats(queue).ready() == 0
                        && running.health().pendingSettlements() == 0);
                Thread.sleep(1000);
            }
        }
        assertEquals(Map.of("long", 1), Map.copyOf(runs).entrySet().stream()
                .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, e -> e.getValue().get())));
        assertTrue(problem.startsWith("Redis refuses renewing leases (NOPERM) for ")
                && problem.contains("grant ACL SETUSER " + AclRedis.WORKER + " +xclaim;"), problem);
    }

    /** The N of "... for N s: ..." in a worker's health problem; -1 when it gives none. */
    private static long ageSeconds(String problem) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(" for (\\d+) s").matcher(problem);
        return m.find() ? Long.parseLong(m.group(1)) : -1;
    }

    private static BinomicConfig workerConfig(RedisServer redis, String queue, Duration lease) {
        return BinomicConfig.builder().brokerUrl(AclRedis.url(redis, AclRedis.WORKER)).schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).leaseTimeout(lease).pollTimeout(Duration.ofMillis(200)).build()).build();
    }

    private static BinomicConfig producerConfig(RedisServer redis) {
        return BinomicConfig.builder().brokerUrl(AclRedis.url(redis, AclRedis.PRODUCER)).schedulePeriodicTasks(false).build();
    }

    private static void await(String what, BooleanSupplier done) {
        Await.until(Duration.ofSeconds(20), done, () -> what);
    }
}
