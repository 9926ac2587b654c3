package io.binomic.micrometer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
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
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
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
    }

    private static double count(MeterRegistry registry, String name, String... tags) {
        return registry.get(name).tags(tags).functionCounter().count();
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
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

}
