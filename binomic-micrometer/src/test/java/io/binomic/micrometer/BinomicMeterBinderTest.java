package io.binomic.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.QueueLimits;
import io.binomic.api.RateLimit;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BinomicMeterBinderTest {
    record Greeting(String name) { }

    static final Task<Greeting, String> GREET = Task.builder("greet", Greeting.class, String.class).queue("mail").build();
    static final Task<Greeting, Void> BOUNCE = Task.builder("bounce", Greeting.class).queue("mail").maxAttempts(2)
            .backoff(Backoff.fixed(Duration.ofMillis(10))).build();

    private static Binomic binomic() {
        return Binomic.builder()
                .config(BinomicConfig.builder().brokerUrl("memory://")
                        .worker(WorkerConfig.builder().pollTimeout(Duration.ofMillis(50)).shutdownGrace(Duration.ofSeconds(2)).build())
                        .build())
                .handle(GREET, g -> {
                    Thread.sleep(20);
                    return "Hello " + g.name();
                })
                .handle(BOUNCE, g -> {
                    throw new IllegalStateException("no mailbox for " + g.name());
                })
                .build().start();
    }

    /** Three greetings succeed; one bounce fails twice: one retry, then a dead letter. */
    private static void runJobs(Binomic binomic, MeterRegistry registry) throws InterruptedException {
        for (String name : new String[] {"Ada", "Grace", "Barbara"}) {
            assertTrue(binomic.submit(GREET, new Greeting(name)).await(Duration.ofSeconds(10)).startsWith("Hello"));
        }
        binomic.submit(BOUNCE, new Greeting("Alan"));
        await("the bounce dead-lettered", () -> count(registry, "binomic.dead.letters", "task", "bounce") == 1);
        // A run's duration is recorded once its handler's outcome is known, which the counters may show a moment sooner.
        await("both bounce runs timed", () -> registry.get("binomic.task.duration").tags("task", "bounce").timer().count() == 2);
    }

    private static double count(MeterRegistry registry, String name, String... tags) {
        return registry.get(name).tags(tags).functionCounter().count();
    }

    /** A condition that may sleep between its reads. */
    interface Condition {
        boolean holds() throws InterruptedException;
    }

    private static void await(String what, Condition condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    @Test
    void simpleRegistryCountsOutcomesRetriesDeadLettersAndTimesRuns() throws InterruptedException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Binomic binomic = binomic(); BinomicMeterBinder binder = new BinomicMeterBinder(binomic)) {
            binder.bindTo(registry);
            // Registered tasks show from zero before anything runs, so a rate() has its start.
            assertEquals(0, count(registry, "binomic.tasks", "queue", "mail", "task", "greet", "outcome", "succeeded"));
            binomic.startWorker();
            runJobs(binomic, registry);

            assertEquals(3, count(registry, "binomic.tasks", "queue", "mail", "task", "greet", "outcome", "succeeded"));
            assertEquals(0, count(registry, "binomic.tasks", "task", "greet", "outcome", "failed"));
            assertEquals(2, count(registry, "binomic.tasks", "task", "bounce", "outcome", "failed"));
            assertEquals(0, count(registry, "binomic.tasks", "task", "bounce", "outcome", "cancelled"));
            assertEquals(1, count(registry, "binomic.task.retries", "task", "bounce"));
            assertEquals(1, count(registry, "binomic.dead.letters", "queue", "mail", "task", "bounce"));
            assertEquals(0, count(registry, "binomic.reclaims", "queue", "mail"));
            assertEquals(0, count(registry, "binomic.stale.settlements"));

            Timer greet = registry.get("binomic.task.duration").tags("queue", "mail", "task", "greet").timer();
            assertEquals(3, greet.count());
            assertTrue(greet.totalTime(TimeUnit.MILLISECONDS) >= 60, "three runs of at least 20 ms: " + greet.totalTime(TimeUnit.MILLISECONDS));
            assertEquals(2, registry.get("binomic.task.duration").tags("task", "bounce").timer().count());

            assertEquals(1, registry.get("binomic.queue.messages").tags("queue", "mail", "state", "dead").gauge().value());
            assertEquals(0, registry.get("binomic.queue.messages").tags("queue", "mail", "state", "ready").gauge().value());
            assertEquals(0, registry.get("binomic.queue.paused").tags("queue", "mail").gauge().value());
            assertEquals(1, registry.get("binomic.queue.consumers").tags("queue", "mail").gauge().value());
            assertEquals(1, registry.get("binomic.broker.up").gauge().value());
            assertEquals(0, registry.get("binomic.tasks.in.flight").gauge().value());
        }
    }

    @Test
    void jobsAPausedTaskHoldsBackAreParkedNotDelayed() throws InterruptedException {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (Binomic binomic = binomic(); BinomicMeterBinder binder = new BinomicMeterBinder(binomic)) {
            binder.bindTo(registry);
            binomic.queues().pauseTask("mail", "greet");
            binomic.startWorker();
            binomic.submit(GREET, new Greeting("Ada"));
            binomic.submit(GREET, new Greeting("Grace"), SubmitOptions.builder().delay(Duration.ofHours(1)).build());
            await("the paused task's due job parked", () -> binomic.queues().parked("mail") == 1);
            // The gauges share a reading for half a second: a fresh one after the park.
            Thread.sleep(600);
            assertEquals(1, registry.get("binomic.queue.messages").tags("queue", "mail", "state", "parked").gauge().value());
            assertEquals(1, registry.get("binomic.queue.messages").tags("queue", "mail", "state", "delayed").gauge().value(),
                    "only the job due in an hour");
        }
    }

    @Test
    void prometheusScrapeHasTheNamesOfMetricsPageAndPassesPromtool(@TempDir Path dir) throws Exception {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        String scrape;
        try (Binomic binomic = binomic(); BinomicMeterBinder binder = new BinomicMeterBinder(binomic)) {
            binder.bindTo(registry);
            binomic.startWorker();
            runJobs(binomic, registry);
            scrape = registry.scrape();
        }
        for (String line : new String[] {
                "binomic_tasks_total{outcome=\"succeeded\",queue=\"mail\",task=\"greet\"} 3.0",
                "binomic_tasks_total{outcome=\"failed\",queue=\"mail\",task=\"bounce\"} 2.0",
                "binomic_task_retries_total{queue=\"mail\",task=\"bounce\"} 1.0",
                "binomic_dead_letters_total{queue=\"mail\",task=\"bounce\"} 1.0",
                "binomic_task_duration_seconds_bucket{queue=\"mail\",task=\"greet\",le=\"300.0\"} 3",
                "binomic_task_duration_seconds_count{queue=\"mail\",task=\"greet\"} 3",
                "binomic_queue_messages{queue=\"mail\",state=\"dead\"} 1.0",
                "binomic_reclaims_total{queue=\"mail\"} 0.0",
                "binomic_stale_settlements_total 0.0",
                "binomic_tasks_in_flight 0.0",
                "binomic_broker_up 1.0"}) {
            assertTrue(scrape.contains(line), "the scrape has " + line + ":\n" + scrape);
        }
        assertTrue(scrape.contains("binomic_task_duration_seconds_bucket{queue=\"mail\",task=\"greet\",le=\"0.005\"}"), scrape);
        for (String help : scrape.lines().filter(l -> l.startsWith("# HELP binomic_")).toList()) {
            assertTrue(help.split(" ", 4).length == 4 && !help.split(" ", 4)[3].isBlank(), "every series has its help text: " + help);
        }
        assertTrue(scrape.contains("# HELP binomic_tasks_total Task executions by the workers of this process"), scrape);
        assertPromtoolAccepts(dir, scrape);
    }

    private static void assertPromtoolAccepts(Path dir, String scrape) throws Exception {
        Path file = dir.resolve("scrape.prom");
        Files.writeString(file, scrape);
        if (!Files.isExecutable(Path.of("/usr/bin/promtool"))) {
            throw new AssertionError("promtool is not installed, and this test checks the scrape with it: install Debian's"
                    + " prometheus package (apt-get install -y prometheus), as .ci/run does");
        }
        Process promtool = new ProcessBuilder("/usr/bin/promtool", "check", "metrics").redirectInput(file.toFile())
                .redirectErrorStream(true).start();
        String out = new String(promtool.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(promtool.waitFor(30, TimeUnit.SECONDS), "promtool finished");
        assertEquals(0, promtool.exitValue(), "promtool check metrics:\n" + out + "\nof\n" + scrape);
        assertEquals("", out.strip(), "promtool's lint found problems");
    }

    static final Task<Greeting, Void> DIGEST = Task.builder("digest", Greeting.class).queue("digests").build();

    /**
     * The series of batches and workflows that {@code /metrics} has: the broker's counts by state,
     * this process's submits and cancels, and the callbacks its workers started with their lag.
     */
    @Test
    void batchesAndWorkflowsHaveTheSeriesOfTheMetricsPage(@TempDir Path dir) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (Binomic binomic = Binomic.builder()
                .config(BinomicConfig.builder().brokerUrl("memory://")
                        .worker(WorkerConfig.builder().queues("mail", "digests").pollTimeout(Duration.ofMillis(50))
                                .shutdownGrace(Duration.ofSeconds(2)).build())
                        .build())
                .handle(GREET, g -> "Hello " + g.name())
                .handle(BOUNCE, g -> {
                    throw new IllegalStateException("no mailbox for " + g.name());
                })
                .handle(DIGEST, g -> null)
                .build().start();
             BinomicMeterBinder binder = new BinomicMeterBinder(binomic)) {
            binder.bindTo(registry);
            binder.bindTo(prometheus);
            assertEquals(0, registry.get("binomic.batches.submitted").functionCounter().count(), "from zero before any submit");
            binomic.startWorker();
            var good = binomic.batch().add(GREET, new Greeting("Ada")).onComplete(DIGEST, new Greeting("all sent")).submit();
            var bad = binomic.batch().add(BOUNCE, new Greeting("Alan")).submit();
            binomic.submit(io.binomic.core.Workflow.builder().add("a", GREET, new Greeting("Grace")).build());
            await("both batches ended", () -> good.status().orElseThrow().pending() == 0 && bad.status().orElseThrow().pending() == 0);
            await("the callback ran", () -> binomic.taskStats().stream().anyMatch(t -> t.task().equals("digest") && t.succeeded() == 1));

            assertEquals(2, registry.get("binomic.batches.submitted").functionCounter().count());
            assertEquals(0, registry.get("binomic.batches.cancelled").functionCounter().count());
            assertEquals(1, registry.get("binomic.workflows.submitted").functionCounter().count());
            assertEquals(0, registry.get("binomic.workflows.cancelled").functionCounter().count());
            assertEquals(1, registry.get("binomic.batch.callbacks.started").tags("queue", "digests", "task", "digest").counter().count());
            Timer lag = registry.get("binomic.batch.callback.lag").tags("queue", "digests", "task", "digest").timer();
            assertEquals(1, lag.count());

            // The broker-wide gauges are bound once a scrape's reading found the broker has batches and workflows.
            assertEquals(1, registry.get("binomic.broker.up").gauge().value());
            await("the workflow ended", () -> {
                Thread.sleep(600); // past the reading's freshness, so the next read is the broker's now
                return registry.get("binomic.workflows").tags("state", "succeeded").gauge().value() == 1;
            });
            assertEquals(1, registry.get("binomic.batches").tags("state", "succeeded").gauge().value());
            assertEquals(1, registry.get("binomic.batches").tags("state", "failed").gauge().value());
            assertEquals(0, registry.get("binomic.batches").tags("state", "open").gauge().value());
            assertEquals(0, registry.get("binomic.batches").tags("state", "cancelled").gauge().value());
            assertEquals(0, registry.get("binomic.workflows").tags("state", "open").gauge().value());

            String scrape = prometheus.scrape();
            for (String line : new String[] {
                    "binomic_batches{state=\"succeeded\"} 1.0",
                    "binomic_workflows{state=\"succeeded\"} 1.0",
                    "binomic_batches_submitted_total 2.0",
                    "binomic_workflows_cancelled_total 0.0",
                    "binomic_batch_callbacks_started_total{queue=\"digests\",task=\"digest\"} 1.0",
                    "binomic_batch_callback_lag_seconds_count{queue=\"digests\",task=\"digest\"} 1",
                    "binomic_batch_callback_lag_seconds_bucket{queue=\"digests\",task=\"digest\",le=\"300.0\"} 1"}) {
                assertTrue(scrape.contains(line), "the scrape has " + line + ":\n" + scrape);
            }
            assertPromtoolAccepts(dir, scrape);
        }
    }

    /**
     * A registry that only scrapes: the gauges of batches and workflows are bound when the binder binds
     * (the broker declares it has them), so the very first scrape after a start has them.
     */
    @Test
    void theFirstScrapeHasTheGaugesOfBatchesAndWorkflows() throws Exception {
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        try (Binomic binomic = binomic(); BinomicMeterBinder binder = new BinomicMeterBinder(binomic)) {
            binomic.batch().keepOpen().submit();
            binder.bindTo(prometheus);
            // Registered before any gauge is read: which meter a scrape reads first depends on the registry's order.
            assertEquals(4, prometheus.find("binomic.batches").gauges().size(), "binomic.batches bound at bindTo");
            assertEquals(4, prometheus.find("binomic.workflows").gauges().size(), "binomic.workflows bound at bindTo");
            String first = prometheus.scrape();
            assertTrue(first.contains("binomic_batches_submitted_total 1.0"), first);
            assertTrue(first.contains("binomic_batches{state=\"open\"} 1.0") && first.contains("binomic_workflows{state=\"open\"} 0.0"),
                    first);
        }
    }

    static final Task<Greeting, Void> HOLD = Task.builder("hold", Greeting.class).queue("limited").concurrencyLimit(1).build();

    private static double gauge(MeterRegistry registry, String name, String... tags) {
        return registry.get(name).tags(tags).gauge().value();
    }

    /**
     * The gauges of flow limits that {@code /metrics} has, registered once a scrape's reading finds
     * the limits: the queue's own (set after the binding) and a task's, with its slot held by a
     * running job and a second job waiting for it; a limit removed reads NaN.
     */
    @Test
    void flowLimitsHaveTheGaugesOfTheMetricsPage(@TempDir Path dir) throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        CountDownLatch release = new CountDownLatch(1);
        try (Binomic binomic = Binomic.builder()
                .config(BinomicConfig.builder().brokerUrl("memory://")
                        .worker(WorkerConfig.builder().queues("limited").concurrency(4).pollTimeout(Duration.ofMillis(50))
                                .shutdownGrace(Duration.ofSeconds(2)).build())
                        .build())
                .handle(HOLD, g -> {
                    release.await();
                    return null;
                })
                .build().start();
             BinomicMeterBinder binder = new BinomicMeterBinder(binomic)) {
            binder.bindTo(registry);
            binder.bindTo(prometheus);
            assertEquals(1, gauge(registry, "binomic.broker.up"));
            binomic.queues().setLimits("limited", QueueLimits.builder().concurrencyLimit(5)
                    .rateLimit(RateLimit.perSecond(50)).build());
            binomic.startWorker();
            binomic.submit(HOLD, new Greeting("Ada"));
            binomic.submit(HOLD, new Greeting("Grace"));
            await("one job holding the task's slot, the other waiting for it", () -> {
                Thread.sleep(600); // past the reading's freshness, so the next read is the broker's now
                return registry.find("binomic.queue.limit.waiting").tags("limit", "task:hold", "waiting", "slot").gauge() != null
                        && gauge(registry, "binomic.queue.limit.waiting", "queue", "limited", "limit", "task:hold", "waiting", "slot") == 1
                        && gauge(registry, "binomic.queue.limit.slots.in.use", "queue", "limited", "limit", "task:hold") == 1;
            });
            assertEquals(1, gauge(registry, "binomic.queue.limit.concurrency", "queue", "limited", "limit", "task:hold"));
            assertEquals(5, gauge(registry, "binomic.queue.limit.concurrency", "queue", "limited", "limit", "queue"));
            assertEquals(50, gauge(registry, "binomic.queue.limit.rate", "queue", "limited", "limit", "queue"));
            assertTrue(gauge(registry, "binomic.queue.limit.slots.in.use", "queue", "limited", "limit", "queue") >= 1,
                    "the running job is pending under the queue's own limit");
            assertTrue(gauge(registry, "binomic.queue.limit.waiting", "queue", "limited", "limit", "queue", "waiting", "rate") >= 0);
            assertNull(registry.find("binomic.queue.limit.rate").tags("limit", "task:hold").gauge(),
                    "a limit the task does not have has no gauge");

            String scrape = prometheus.scrape();
            for (String line : new String[] {
                    "binomic_queue_limit_concurrency{limit=\"task:hold\",queue=\"limited\"} 1.0",
                    "binomic_queue_limit_concurrency{limit=\"queue\",queue=\"limited\"} 5.0",
                    "binomic_queue_limit_rate{limit=\"queue\",queue=\"limited\"} 50.0",
                    "# HELP binomic_queue_limit_waiting Jobs waiting for a limit"}) {
                assertTrue(scrape.contains(line), "the scrape has " + line + ":\n" + scrape);
            }
            assertPromtoolAccepts(dir, scrape);

            binomic.queues().setLimits("limited", QueueLimits.NONE);
            await("the queue's own limit gone", () -> {
                Thread.sleep(600);
                return Double.isNaN(gauge(registry, "binomic.queue.limit.concurrency", "queue", "limited", "limit", "queue"));
            });
            assertEquals(1, gauge(registry, "binomic.queue.limit.concurrency", "queue", "limited", "limit", "task:hold"));
            release.countDown();
        }
    }
}
