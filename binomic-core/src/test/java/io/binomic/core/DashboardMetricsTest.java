package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.JobHandle;
import io.binomic.api.NonRetryableException;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerHealthReport;
import io.binomic.core.internal.web.Promtool;
import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code /metrics} of a client's dashboard: task outcomes, retries, dead letters and durations
 * of the workers in this JVM, queue depths as the broker reports them; promtool accepts it; the
 * server listens on loopback unless given a token.
 */
class DashboardMetricsTest {
    record Job(int n) { }

    private final Task<Job, String> ok = Task.builder("ok", Job.class, String.class).queue("metered").build();
    private final Task<Job, String> flaky = Task.builder("flaky", Job.class, String.class).queue("metered")
            .maxAttempts(2).backoff(Backoff.fixed(Duration.ofMillis(10))).build();
    private final Task<Job, String> doomed = Task.builder("doomed", Job.class, String.class).queue("metered").build();
    private final Task<Job, Void> doomedUntracked = Task.builder("doomed-untracked", Job.class).queue("metered").build();
    private Binomic binomic;

    @AfterEach
    void close() {
        if (binomic != null) {
            binomic.close();
        }
    }

    private Binomic started() {
        binomic = Binomic.builder()
                .config(BinomicConfig.builder().worker(WorkerConfig.builder().pollTimeout(Duration.ofMillis(100)).build()).build())
                .handle(ok, j -> "ok")
                .handle(flaky, j -> {
                    if (TaskContext.current().attempt() == 1) {
                        throw new IllegalStateException("once");
                    }
                    return "second";
                })
                .handle(doomed, j -> {
                    throw new NonRetryableException("never");
                })
                .handle(doomedUntracked, j -> {
                    throw new NonRetryableException("never");
                })
                .build().start();
        return binomic;
    }

    static String get(URI uri, String authorization) throws IOException {
        HttpURLConnection c = (HttpURLConnection) uri.toURL().openConnection();
        if (authorization != null) {
            c.setRequestProperty("Authorization", authorization);
        }
        int status = c.getResponseCode();
        try (var in = status < 400 ? c.getInputStream() : c.getErrorStream()) {
            return status + " " + new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void metricsCountOutcomesRetriesDeadLettersAndDepthsAndPassPromtool() throws Exception {
        Binomic b = started();
        b.startWorker();
        b.submit(ok, new Job(1)).await(Duration.ofSeconds(10));
        b.submit(ok, new Job(2)).await(Duration.ofSeconds(10));
        b.submit(flaky, new Job(3)).await(Duration.ofSeconds(10));
        b.submit(doomed, new Job(4));
        while (b.queueStats("metered").deadLetters() < 1) {
            Thread.sleep(20);
        }
        b.queues().pause("metered");
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            assertEquals("127.0.0.1", dashboard.address().getAddress().getHostAddress(), "loopback unless told");
            String response = get(dashboard.uri().resolve("metrics"), null);
            assertTrue(response.startsWith("200 "), response);
            String text = response.substring(4);
            for (String line : List.of(
                    "binomic_tasks_total{queue=\"metered\",task=\"ok\",outcome=\"succeeded\"} 2",
                    "binomic_tasks_total{queue=\"metered\",task=\"flaky\",outcome=\"failed\"} 1",
                    "binomic_tasks_total{queue=\"metered\",task=\"flaky\",outcome=\"succeeded\"} 1",
                    "binomic_task_retries_total{queue=\"metered\",task=\"flaky\"} 1",
                    "binomic_dead_letters_total{queue=\"metered\",task=\"doomed\"} 1",
                    "binomic_task_duration_seconds_count{queue=\"metered\",task=\"ok\"} 2",
                    "binomic_task_duration_seconds_bucket{queue=\"metered\",task=\"flaky\",le=\"+Inf\"} 2",
                    "binomic_queue_messages{queue=\"metered\",state=\"dead\"} 1",
                    "binomic_queue_messages{queue=\"metered\",state=\"ready\"} 0",
                    "binomic_queue_paused{queue=\"metered\"} 1",
                    "binomic_broker_up 1")) {
                assertTrue(text.lines().anyMatch(line::equals), "missing line " + line + " in\n" + text);
            }
            Promtool.assertValid(text);
        }
    }

    @Test
    void jobsAPausedTaskHoldsBackShowAsParkedNotDelayed() throws Exception {
        Binomic b = started();
        b.queues().pauseTask("metered", "ok");
        b.startWorker();
        b.submit(ok, new Job(1));
        b.submit(ok, new Job(2));
        b.submit(ok, new Job(3), SubmitOptions.builder().delay(Duration.ofHours(1)).build());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (b.queues().parked("metered") < 2 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(2, b.queues().parked("metered"), "the worker parked the paused task's two due jobs");
        assertEquals(3, b.queueStats("metered").delayed(), "the broker's delayed set holds them beside the delayed one");
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            String text = get(dashboard.uri().resolve("metrics"), null).substring(4);
            for (String line : List.of(
                    "binomic_queue_messages{queue=\"metered\",state=\"delayed\"} 1",
                    "binomic_queue_messages{queue=\"metered\",state=\"parked\"} 2")) {
                assertTrue(text.lines().anyMatch(line::equals), "missing line " + line + " in\n" + text);
            }
            Promtool.assertValid(text);
            String page = get(dashboard.uri(), null);
            assertTrue(page.contains("<td class=\"delayed\">1</td><td class=\"parked\">2</td>"), page);
        }
    }

    @Test
    void deadLettersShowTheirJobLinkedToItsPageOnlyNonZeroDeadCountsAreMarkedAndANonWorkerHasNoTasksTable() throws Exception {
        Binomic b = started();
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            String before = get(dashboard.uri(), null);
            assertTrue(before.contains("<td class=\"dead\">0</td>"), before);
            assertFalse(before.contains("Tasks run by this process"), "no worker runs here: no empty table");
            assertTrue(before.contains("id=\"no-local-tasks\""), before);

            b.startWorker();
            JobHandle<String> job = b.submit(doomed, new Job(1));
            while (b.queueStats("metered").deadLetters() < 1) {
                Thread.sleep(20);
            }
            String entry = b.deadLetters().list("metered", DeadLetterFilter.all(), 10).getFirst().id();

            String overview = get(dashboard.uri(), null);
            assertTrue(overview.contains("<td class=\"dead nonzero\">1</td>"), overview);
            assertTrue(overview.contains("Tasks run by this process"), overview);
            String letters = get(dashboard.uri().resolve("dead-letters"), null);
            assertTrue(letters.contains("<td class=\"job\"><a href=\"/jobs?id=" + job.id() + "\">" + job.id() + "</a></td>"), letters);
            assertTrue(letters.contains("data-letter=\"" + entry + "\"") && letters.contains("<td class=\"entry\">" + entry + "</td>"),
                    "the entry id stays where replay and purge need it: " + letters);
        }
    }

    @Test
    void anUntrackedJobsDeadLetterShowsItsIdWithoutALinkToAPageThatWouldHaveNoStatus() throws Exception {
        Binomic b = started();
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            b.startWorker();
            JobHandle<Void> job = b.submit(doomedUntracked, new Job(2));
            while (b.queueStats("metered").deadLetters() < 1) {
                Thread.sleep(20);
            }

            String letters = get(dashboard.uri().resolve("dead-letters"), null);
            assertTrue(letters.contains("<td class=\"job\">" + job.id() + "</td>"), letters);
            assertFalse(letters.contains("/jobs?id=" + job.id()), letters);
        }
    }

    @Test
    void aJobWithoutStatusSaysWhyInsteadOfShowingBlankFieldsAndACancelButton() throws Exception {
        Binomic b = started();
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            b.startWorker();
            JobHandle<Void> job = b.submit(doomedUntracked, new Job(3));
            while (b.queueStats("metered").deadLetters() < 1) {
                Thread.sleep(20);
            }

            String page = get(dashboard.uri().resolve("jobs?id=" + job.id()), null);
            assertTrue(page.contains("<p class=\"error\" id=\"job-missing\">no status is kept for job " + job.id() + " on queue metered:"
                    + " a wrong id or queue, a task that is not tracked (its dead letters show the job id), or a status past its"
                    + " retention</p>"), page);
            assertFalse(page.contains("job-state") || page.contains("job-cancel"), page);
        }
    }

    @Test
    void aDashboardSettingGivenTwiceIsRefusedNamingIt() {
        Binomic b = started();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.dashboard().port(0).port(9470));
        assertEquals("dashboard port is set twice; set it once", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> b.dashboard().readOnly(true).readOnly(false));
    }

    @Test
    void anotherAddressThanLoopbackNeedsATokenAndRequestsMustShowIt() throws Exception {
        Binomic b = started();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> b.dashboard().bindAddress("0.0.0.0").port(0).start());
        assertEquals("a dashboard bound to 0.0.0.0 is reachable from other hosts and needs a token: set one (at least 16"
                + " random characters), or bind to 127.0.0.1", e.getMessage());
        String token = "0123456789abcdef0123";
        try (Dashboard dashboard = b.dashboard().bindAddress("127.0.0.1").port(0).token(token).start()) {
            URI metrics = dashboard.uri().resolve("metrics");
            assertTrue(get(metrics, null).startsWith("401 this dashboard needs its token"));
            assertTrue(get(metrics, "Bearer wrong-token-wrong-token").startsWith("401 "));
            assertTrue(get(metrics, "Bearer " + token).startsWith("200 # HELP"));
        }
    }

    /** One raw HTTP/1.1 exchange, so that the test can set Host and Origin as a browser under DNS rebinding would. */
    static String raw(URI base, String method, String path, String body, String... headers) throws IOException {
        try (java.net.Socket socket = new java.net.Socket(base.getHost(), base.getPort())) {
            StringBuilder request = new StringBuilder(method + " " + path + " HTTP/1.1\r\nConnection: close\r\n");
            boolean host = false;
            for (String h : headers) {
                request.append(h).append("\r\n");
                host |= h.startsWith("Host:");
            }
            if (!host) {
                request.append("Host: ").append(base.getHost()).append(':').append(base.getPort()).append("\r\n");
            }
            byte[] content = body.getBytes(StandardCharsets.UTF_8);
            if (method.equals("POST")) {
                request.append("Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ").append(content.length).append("\r\n");
            }
            request.append("\r\n");
            socket.getOutputStream().write(request.toString().getBytes(StandardCharsets.UTF_8));
            socket.getOutputStream().write(content);
            socket.getOutputStream().flush();
            String response = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            return response.isEmpty() ? "no response" : response;
        }
    }

    @Test
    void aTokenlessDashboardAnswersOnlyToLoopbackNamesAndChangesOnlyFromItsOwnPagesWithClearRefusals() throws Exception {
        Binomic b = started();
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            URI base = dashboard.uri();
            String port = Integer.toString(base.getPort());
            assertTrue(raw(base, "GET", "/queues", "", "Host: attacker.example:" + port).startsWith("HTTP/1.1 421"),
                    "a rebound name is refused before any page (and its CSRF token) is served");
            for (String host : List.of("attacker.example", "127.0.0.1.attacker.example", "localhost.", "127.0.0.1:abc",
                    "127.0.0.1:" + port + "@attacker.example", "")) {
                assertTrue(raw(base, "GET", "/metrics", "", "Host: " + host).startsWith("HTTP/1.1 421"), "Host: " + host);
            }
            String page = raw(base, "GET", "/queues", "", "Host: localhost:" + port);
            assertTrue(page.startsWith("HTTP/1.1 200"), page);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("name=\"csrf\" value=\"([0-9a-f]+)\"").matcher(page);
            assertTrue(m.find(), page);
            String csrf = m.group(1);

            String foreign = raw(base, "POST", "/queues/pause", "csrf=" + csrf + "&queue=metered", "Origin: http://attacker.example:" + port);
            assertTrue(foreign.startsWith("HTTP/1.1 403"), foreign);
            assertTrue(raw(base, "POST", "/queues/pause", "csrf=" + csrf + "&queue=metered", "Origin: null").startsWith("HTTP/1.1 403"),
                    "an opaque origin (a sandboxed frame) is no page of the dashboard");
            assertFalse(b.queues().isPaused("metered"), "nothing changed");
            String unknown = raw(base, "POST", "/queues/pause", "csrf=" + csrf + "&queue=nope", "Origin: " + base.toString().replaceAll("/$", ""));
            assertTrue(unknown.startsWith("HTTP/1.1 400") && unknown.contains("bad request: unknown queue 'nope'"), unknown);
            String badId = raw(base, "POST", "/jobs/cancel", "csrf=" + csrf + "&id=not-a-uuid");
            assertTrue(badId.startsWith("HTTP/1.1 400") && badId.contains("'not-a-uuid' is not a job id"), badId);
            String badEncoding = raw(base, "POST", "/dead-letters/purge", "csrf=" + csrf + "&queue=metered&letter=%zz");
            assertTrue(badEncoding.startsWith("HTTP/1.1 400"), badEncoding);

            String done = raw(base, "POST", "/queues/pause", "csrf=" + csrf + "&queue=metered");
            assertTrue(done.startsWith("HTTP/1.1 303") && b.queues().isPaused("metered"), done);
            String location = done.lines().filter(l -> l.startsWith("Location: ")).findFirst().orElseThrow().substring(10);
            assertTrue(raw(base, "GET", location, "").contains("paused metered"), "the flash of the change");
            assertFalse(raw(base, "GET", "/queues?done=Session+expired", "").contains("Session expired"),
                    "a link cannot put its own text in the flash");
        }
    }

    /**
     * A broker that stops answering (Redis down: its client's timeouts and retries take about 15 s)
     * must not hold a page or a scrape past Prometheus' 10 s timeout: both answer after the 3 s
     * deadline, the scrape with broker_up 0 and the counters. The stats call here answers after
     * 20 s, so a 1 would mean the scrape waited for it.
     */
    @Test
    void aBrokerThatHangsGetsPagesAndScrapesThatSaySoInsteadOfTimingOut() throws Exception {
        java.util.concurrent.CountDownLatch hanging = new java.util.concurrent.CountDownLatch(1);
        boolean[] hang = {false};
        ForwardingBroker broker = new ForwardingBroker(new io.binomic.core.internal.memory.MemoryBrokerProvider()
                .create(io.binomic.api.BrokerConfig.defaults())) {
            @Override
            public io.binomic.api.QueueStats stats(String queue) {
                if (hang[0]) {
                    try {
                        hanging.await(20, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return super.stats(queue);
            }
        };
        binomic = Binomic.builder().broker(broker).scheduler(broker.scheduler()).handle(ok, j -> "ok").build().start();
        binomic.startWorker();
        binomic.submit(ok, new Job(1)).await(Duration.ofSeconds(10));
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            assertTrue(get(dashboard.uri().resolve("metrics"), null).contains("binomic_broker_up 1"));
            hang[0] = true;
            String metrics = get(dashboard.uri().resolve("metrics"), null);
            assertTrue(metrics.startsWith("200 ") && metrics.contains("\nbinomic_broker_up 0\n")
                    && metrics.contains("binomic_tasks_total{queue=\"metered\",task=\"ok\",outcome=\"succeeded\"} 1"), metrics);
            String page = get(dashboard.uri(), null);
            assertTrue(page.startsWith("200 ") && page.contains("The broker did not answer within 3 s")
                    && page.contains("Tasks run by this process"), "what needs no broker still shows: " + page);
        } finally {
            hanging.countDown();
        }
    }

    /**
     * A process that knows no queue (it only submits, or relays an outbox) still asks the broker: with no queue query to
     * fail, a broker that stopped answering must not read as up.
     */
    @Test
    void aProcessWithoutQueuesReportsTheBrokerDownWhenItStopsAnswering() throws Exception {
        boolean[] down = {false};
        ForwardingBroker broker = new ForwardingBroker(new io.binomic.core.internal.memory.MemoryBrokerProvider()
                .create(io.binomic.api.BrokerConfig.defaults())) {
            @Override
            public io.binomic.api.QueueStats stats(String queue) {
                if (down[0]) {
                    throw new IllegalStateException("connection refused");
                }
                return super.stats(queue);
            }
        };
        binomic = Binomic.builder().broker(broker).scheduler(broker.scheduler()).build().start();
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            assertTrue(get(dashboard.uri().resolve("metrics"), null).contains("\nbinomic_broker_up 1\n"));
            down[0] = true;
            String metrics = get(dashboard.uri().resolve("metrics"), null);
            assertTrue(metrics.startsWith("200 ") && metrics.contains("\nbinomic_broker_up 0\n"), metrics);
        }
    }

    /** A broker reporting its servers' settings, as the Redis broker reports maxmemory-policy. */
    private static final class ReportingBroker extends ForwardingBroker implements BrokerHealthReport {
        volatile List<ServerSetting> settings = List.of();

        ReportingBroker(Broker delegate) {
            super(delegate);
        }

        @Override
        public List<ServerSetting> serverSettings() {
            return settings;
        }

        /** Its own report, which the memory broker it forwards to does not have. */
        @Override
        public <T> Optional<T> capability(Class<T> type) {
            return type == BrokerHealthReport.class ? Optional.of(type.cast(this)) : super.capability(type);
        }
    }

    /**
     * What the broker reports of its servers shows in {@code /metrics} (1 safe, 0 at risk; a
     * setting it could not read is left out) and, when at risk or unknown, on the overview.
     */
    @Test
    void aBrokerServerSettingAtRiskShowsInMetricsAndOnTheOverview() throws Exception {
        ReportingBroker broker = new ReportingBroker(new io.binomic.core.internal.memory.MemoryBrokerProvider()
                .create(io.binomic.api.BrokerConfig.defaults()));
        broker.settings = List.of(new BrokerHealthReport.ServerSetting("maxmemory-policy", "10.0.0.1:6379",
                java.util.Optional.of("noeviction"), java.util.Optional.empty()));
        binomic = Binomic.builder().broker(broker).scheduler(broker.scheduler()).handle(ok, j -> "ok").build().start();
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            String safe = get(dashboard.uri().resolve("metrics"), null);
            assertTrue(safe.contains("# TYPE binomic_broker_setting_ok gauge\n")
                    && safe.contains("binomic_broker_setting_ok{setting=\"maxmemory-policy\",server=\"10.0.0.1:6379\",value=\"noeviction\"} 1\n"), safe);
            assertFalse(get(dashboard.uri(), null).contains("server-settings"), "nothing at risk, nothing shown");

            broker.settings = List.of(
                    new BrokerHealthReport.ServerSetting("maxmemory-policy", "10.0.0.1:6379", java.util.Optional.of("allkeys-lru"),
                            java.util.Optional.of("queued jobs may be deleted")),
                    new BrokerHealthReport.ServerSetting("maxmemory-policy", "10.0.0.2:6379", java.util.Optional.empty(),
                            java.util.Optional.of("CONFIG GET refused")));
            String risky = get(dashboard.uri().resolve("metrics"), null);
            assertTrue(risky.contains("binomic_broker_setting_ok{setting=\"maxmemory-policy\",server=\"10.0.0.1:6379\",value=\"allkeys-lru\"} 0\n")
                    && !risky.contains("10.0.0.2"), risky);
            Promtool.assertValid(risky.substring("200 ".length()));
            String page = get(dashboard.uri(), null);
            assertTrue(page.contains("id=\"server-settings\"") && page.contains("allkeys-lru") && page.contains("queued jobs may be deleted")
                    && page.contains("unknown") && page.contains("CONFIG GET refused"), page);
        }
    }
}
