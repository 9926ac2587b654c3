package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.NonRetryableException;
import io.binomic.api.QueueLimits;
import io.binomic.api.QueueStats;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.TraceContext;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Message;
import io.binomic.core.Binomic;
import io.binomic.core.Dashboard;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * The dashboard in a real browser (Debian's headless chromium through /usr/bin/chromedriver,
 * installed by .ci/run) against Redis with a live worker: every page renders, counts match the
 * broker, a dead letter is replayed and another purged through the UI (and the broker agrees), a
 * job is cancelled, a queue paused; a payload holding {@code <script>} shows as text. Screenshots
 * go to target/dashboard-*.png.
 */
class DashboardBrowserIT {
    record Order(String note) { }

    private static final String QUEUE = "shop-" + UUID.randomUUID().toString().substring(0, 6);
    private static final String SCRIPT = "<script>document.title='pwned'</script>";
    private static final TraceContext TRACE = TraceContext.of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    private static final Task<Order, String> ship = Task.builder("ship", Order.class, String.class).queue(QUEUE)
            .keepStatusFor(Duration.ofHours(1)).build();
    private static final Task<Order, String> charge = Task.builder("charge", Order.class, String.class).queue(QUEUE).build();
    private static final Task<Void, Void> nightly = Task.builder("nightly-report").queue(QUEUE)
            .cron("0 2 * * *", ZoneId.of("Europe/Paris")).build();
    /** Fires every second onto a queue no worker reads: the schedules page shows its last tick. */
    private static final Task<Void, Void> heartbeat = Task.builder("heartbeat").queue(QUEUE + "-ticks")
            .interval(Duration.ofSeconds(1)).build();

    private static Binomic binomic;
    private static Dashboard dashboard;
    private static ChromeDriver browser;
    private static final Path SHOTS = Path.of("target");
    /** How long findElement waits for an element of a page still loading. */
    private static final Duration IMPLICIT_WAIT = Duration.ofSeconds(5);

    @BeforeAll
    static void start() {
        for (String binary : List.of("/usr/bin/chromium", "/usr/bin/chromedriver")) {
            if (!Files.isExecutable(Path.of(binary))) {
                throw new AssertionError(binary + " is missing, and the dashboard is tested in a real browser: install Debian's"
                        + " chromium and chromium-driver (apt-get install -y chromium chromium-driver), as .ci/run does");
            }
        }
        // Chromium takes seconds to start on a loaded machine: start it while Redis and the client start.
        java.util.concurrent.CompletableFuture<ChromeDriver> starting = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
            ChromeOptions options = new ChromeOptions();
            options.setBinary("/usr/bin/chromium");
            options.addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1280,900");
            ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(Path.of("/usr/bin/chromedriver").toFile())
                    .usingAnyFreePort().build();
            return new ChromeDriver(service, options);
        });
        binomic = Binomic.builder()
                .config(BinomicConfig.builder().brokerUrl(RedisServer.shared().url())
                        .worker(WorkerConfig.builder().queues(QUEUE).pollTimeout(Duration.ofMillis(200)).build()).build())
                .handle(ship, o -> "shipped " + o.note())
                .handle(charge, o -> {
                    if (TaskContext.current().headers().get(Message.REPLAYED_FROM) == null) {
                        throw new NonRetryableException("card declined for " + o.note());
                    }
                    return "charged on replay";
                })
                .handle(nightly, () -> { })
                .task(heartbeat)
                .build().start();
        binomic.startWorker();
        dashboard = binomic.dashboard().port(0).start();
        browser = starting.join();
        browser.manage().timeouts().implicitlyWait(IMPLICIT_WAIT);
    }

    @AfterAll
    static void stop() {
        if (browser != null) {
            browser.quit();
        }
        if (dashboard != null) {
            dashboard.close();
        }
        if (binomic != null) {
            binomic.close();
        }
    }

    private static void open(String path) {
        browser.get(dashboard.uri().resolve(path).toString());
    }

    private static void shot(String name) throws IOException {
        Path file = ((TakesScreenshot) browser).getScreenshotAs(OutputType.FILE).toPath();
        Files.copy(file, SHOTS.resolve("dashboard-" + name + ".png"), StandardCopyOption.REPLACE_EXISTING);
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        for (int i = 0; i < 200; i++) {
            if (condition.getAsBoolean()) {
                return;
            }
            Thread.sleep(50);
        }
        throw new AssertionError("not within 10 s: " + what);
    }

    /** Waits for the page after a form's redirect: the flash message of the action starts with {@code prefix}. */
    private static void awaitFlash(String prefix) throws InterruptedException {
        browser.manage().timeouts().implicitlyWait(Duration.ZERO); // this loop polls: an implicit wait would only slow it
        try {
            await("a flash starting with '" + prefix + "'", () -> {
                try {
                    return browser.findElements(By.id("flash")).stream().anyMatch(e -> e.getText().startsWith(prefix));
                } catch (org.openqa.selenium.WebDriverException e) {
                    return false; // the page was replaced while we read it
                }
            });
        } finally {
            browser.manage().timeouts().implicitlyWait(IMPLICIT_WAIT);
        }
    }

    private static String cell(WebElement row, String cls) {
        return row.findElement(By.cssSelector("td." + cls)).getText();
    }

    @Test
    void anOperatorClicksThroughEveryPageAndChangesAreWhatTheBrokerSees() throws Exception {
        // Live traffic: two shipped, two charges dead-lettered (one with a script in its payload), one job scheduled for later.
        binomic.submit(ship, new Order("a")).await(Duration.ofSeconds(10));
        binomic.submit(ship, new Order("b")).await(Duration.ofSeconds(10));
        binomic.submit(charge, new Order(SCRIPT), SubmitOptions.builder().traceContext(TRACE).build());
        binomic.submit(charge, new Order("to purge"));
        JobHandle<String> later = binomic.submit(ship, new Order("later"), SubmitOptions.builder().delay(Duration.ofHours(1)).build());
        await("two dead letters", () -> binomic.queueStats(QUEUE).deadLetters() == 2);

        // Overview: the counts are the broker's.
        open("/");
        QueueStats stats = binomic.queueStats(QUEUE);
        WebElement row = browser.findElement(By.cssSelector("#queues tr[data-queue='" + QUEUE + "']"));
        assertEquals(Long.toString(stats.deadLetters()), cell(row, "dead"));
        assertEquals(Long.toString(stats.delayed()), cell(row, "delayed"));
        assertEquals(Long.toString(stats.ready()), cell(row, "ready"));
        assertTrue(browser.findElement(By.id("tasks")).getText().contains("ship"));

        // Workers: this process's worker, consuming.
        browser.findElement(By.id("nav-workers")).click();
        assertTrue(browser.findElement(By.id("local-workers")).getText().contains("CONSUMING"));
        shot("workers");

        // Schedules: the cron task with its next fire times in its zone; the interval task's last tick.
        browser.findElement(By.id("nav-schedules")).click();
        String schedules = browser.findElement(By.id("schedules")).getText();
        assertTrue(schedules.contains("nightly-report") && schedules.contains("Europe/Paris") && schedules.contains("02:00:00"), schedules);
        String lastTick = browser.findElement(By.cssSelector("#schedules tr[data-task='heartbeat'] td.last-fired")).getText();
        assertTrue(lastTick.matches("\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d .*"), "the last tick fired: " + lastTick);
        shot("schedules");

        // Dead letters: the script shows as text and did not run; replay one, purge the other.
        browser.findElement(By.id("nav-dead-letters")).click();
        assertTrue(browser.getPageSource().contains("&lt;script&gt;"), "the payload is escaped");
        assertFalse(browser.getTitle().contains("pwned"), "the payload's script did not run");
        assertTrue(browser.findElement(By.tagName("main")).getText().contains(SCRIPT), "it shows as text");
        assertTrue(browser.findElement(By.tagName("main")).getText().contains(TRACE.traceId()), "the trace id shows");
        shot("dead-letters");
        List<DeadLetter> letters = binomic.deadLetters().list(QUEUE, DeadLetterFilter.all(), 10);
        DeadLetter scripted = letters.stream().filter(d -> d.failure().errorMessage().contains("<script>")).findFirst().orElseThrow();
        DeadLetter other = letters.stream().filter(d -> d != scripted).findFirst().orElseThrow();
        browser.findElement(By.id("replay-" + scripted.id())).click();
        browser.switchTo().alert().accept();
        awaitFlash("replayed " + scripted.id());
        browser.findElement(By.id("purge-" + other.id())).click();
        browser.switchTo().alert().dismiss(); // the confirmation guards: nothing happens
        assertEquals(1, binomic.deadLetters().list(QUEUE, DeadLetterFilter.all(), 10).stream().filter(d -> d.id().equals(other.id())).count());
        browser.findElement(By.id("purge-" + other.id())).click();
        browser.switchTo().alert().accept();
        awaitFlash("purged " + other.id());
        await("the broker has no dead letter left", () -> binomic.queueStats(QUEUE).deadLetters() == 0);

        // Jobs: find the scheduled one by id and cancel it.
        browser.findElement(By.id("nav-jobs")).click();
        browser.findElement(By.id("job-id")).sendKeys(later.id().toString());
        browser.findElement(By.id("job-search")).click();
        assertEquals("SCHEDULED", browser.findElement(By.id("job-state")).getText());
        browser.findElement(By.id("job-cancel")).click();
        browser.switchTo().alert().accept();
        awaitFlash("job " + later.id() + ": CANCELLED");
        assertEquals("CANCELLED", browser.findElement(By.id("job-state")).getText());
        assertEquals(JobState.CANCELLED, later.status().state(), "the broker agrees");

        // Queues: its limits, and pause.
        binomic.queues().setLimits(QUEUE, QueueLimits.builder().concurrencyLimit(4).build());
        browser.findElement(By.id("nav-queues")).click();
        assertEquals("concurrency 4", browser.findElement(By.cssSelector("#limits tr[data-queue='" + QUEUE + "'][data-limit='queue'] td.setting")).getText());
        // in use counts the queue's pending deliveries: the charge replayed above may be running
        String inUse = browser.findElement(By.cssSelector("#limits tr[data-queue='" + QUEUE + "'][data-limit='queue'] td.in-use")).getText();
        assertTrue(inUse.matches("[0-4] of 4"), inUse);
        browser.findElement(By.id("pause-" + QUEUE)).click();
        browser.switchTo().alert().accept();
        awaitFlash("paused " + QUEUE);
        assertTrue(binomic.queues().isPaused(QUEUE), "the broker has the queue paused");
        assertEquals("paused", browser.findElement(By.cssSelector("#queue-controls tr[data-queue='" + QUEUE + "'] td.state")).getText());
        shot("queues");
        browser.findElement(By.id("resume-" + QUEUE)).click();
        awaitFlash("resumed " + QUEUE);
        assertFalse(binomic.queues().isPaused(QUEUE));
        binomic.queues().setLimits(QUEUE, QueueLimits.NONE);

        // A traced job that ran: its page shows the trace it was submitted with.
        JobHandle<String> traced = binomic.submit(ship, new Order("traced"), SubmitOptions.builder().traceContext(TRACE).build());
        traced.await(Duration.ofSeconds(10));
        open("/jobs?id=" + traced.id());
        assertEquals("SUCCEEDED", browser.findElement(By.id("job-state")).getText());
        assertEquals(TRACE.traceId(), browser.findElement(By.id("job-trace")).getText());
        shot("job");

        // Overview charts: drawn, and (once the worker's counts reach the broker, every few seconds)
        // they add up to what the workers ran.
        long succeeded = binomic.taskStats().stream().mapToLong(t -> t.succeeded()).sum();
        long failed = binomic.taskStats().stream().mapToLong(t -> t.failed()).sum();
        long deadLettered = binomic.taskStats().stream().mapToLong(t -> t.deadLettered()).sum();
        assertEquals(List.of(4L, 2L, 2L), List.of(succeeded, failed, deadLettered), "ship x3 and the replayed charge; two charges failed");
        open("/");
        awaitLong("the charts count what ran", () -> {
            WebElement throughput = browser.findElement(By.id("chart-throughput"));
            WebElement failures = browser.findElement(By.id("chart-failures"));
            return throughput.getDomAttribute("data-total-succeeded").equals(Long.toString(succeeded))
                    && throughput.getDomAttribute("data-total-failed").equals(Long.toString(failed))
                    && failures.getDomAttribute("data-total-dead-lettered").equals(Long.toString(deadLettered));
        });
        for (String chart : List.of("chart-throughput", "chart-failures", "chart-latency")) {
            // Read in one script run: the live refresh replaces the charts every 5 s, and elements
            // found before a refresh went stale between two reads (CI, 2026-12-01).
            List<?> drawn = (List<?>) browser.executeScript("""
                    const svg = document.querySelector('#' + arguments[0] + ' svg');
                    if (!svg) return [0, 0, 0, 0];
                    const box = svg.getBoundingClientRect();
                    const heights = [...svg.querySelectorAll('rect')].map(bar => bar.getBoundingClientRect().height);
                    const shown = getComputedStyle(svg).visibility !== 'hidden' && box.height > 0 ? 1 : 0;
                    return [shown, box.width, heights.length, heights.filter(h => !(h > 0)).length];""", chart);
            List<Long> read = drawn.stream().map(v -> Math.round(((Number) v).doubleValue())).toList();
            assertTrue(read.get(0) == 1 && read.get(1) > 200, chart + " is drawn: [shown, width, bars, flat bars] " + read);
            assertTrue(read.get(2) > 0, chart + " has bars: " + read);
            assertEquals(0L, read.get(3), chart + "'s bars have a height: " + read);
        }
        shot("overview");
    }

    /** {@link #await} for what the browser shows after a live refresh: up to 20 s, without implicit waits. */
    private static void awaitLong(String what, BooleanSupplier condition) throws InterruptedException {
        browser.manage().timeouts().implicitlyWait(Duration.ZERO);
        try {
            for (int i = 0; i < 80; i++) {
                try {
                    if (condition.getAsBoolean()) {
                        return;
                    }
                } catch (org.openqa.selenium.WebDriverException e) {
                    // the live refresh replaced what we read
                }
                Thread.sleep(250);
            }
            throw new AssertionError("not within 20 s: " + what + "\n" + browser.findElement(By.id("charts")).getText());
        } finally {
            browser.manage().timeouts().implicitlyWait(IMPLICIT_WAIT);
        }
    }

    /**
     * A batch and a workflow, each found by id through its lookup form: the batch's counts and its
     * failed job's link, the workflow's jobs in order; each cancelled by its button, and the broker
     * agrees. {@code /metrics} counts the callback of the batch that completed. Its own client and
     * queue: the other test adds up every task this client's workers ran.
     */
    @Test
    void anOperatorLooksUpABatchAndAWorkflowByIdAndCancelsEach() throws Exception {
        String queue = "flows-" + UUID.randomUUID().toString().substring(0, 6);
        String idle = queue + "-idle"; // no worker reads it: what is enqueued there stays until cancelled
        Task<Order, String> pack = Task.builder("pack", Order.class, String.class).queue(queue).build();
        Task<Order, String> refund = Task.builder("refund", Order.class, String.class).queue(queue).maxAttempts(1).build();
        Task<Order, String> waiting = Task.builder("wait", Order.class, String.class).queue(idle).build();
        try (Binomic flows = Binomic.builder()
                .config(BinomicConfig.builder().brokerUrl(RedisServer.shared().url())
                        .worker(WorkerConfig.builder().queues(queue).pollTimeout(Duration.ofMillis(200)).build()).build())
                .handle(pack, o -> "packed " + o.note())
                .handle(refund, o -> {
                    throw new NonRetryableException("no refund for " + o.note());
                })
                .task(waiting)
                .build().start();
             Dashboard board = flows.dashboard().port(0).start()) {
            flows.startWorker();
            io.binomic.core.BatchHandle ended = flows.batch().add(pack, new Order("a")).add(refund, new Order("b"))
                    .onComplete(pack, new Order("report")).submit();
            await("the batch's callback ran", () -> flows.taskStats().stream().filter(t -> t.task().equals("pack"))
                    .mapToLong(t -> t.succeeded()).sum() == 2);
            UUID failed = ended.status().orElseThrow().failedJobs().getFirst();

            browser.get(board.uri().resolve("/").toString());
            browser.findElement(By.id("nav-batches")).click();
            browser.findElement(By.id("batch-id")).sendKeys(ended.id().toString());
            browser.findElement(By.id("batch-search")).click();
            assertEquals("FAILED", browser.findElement(By.id("batch-state")).getText());
            assertEquals(List.of("2", "0", "1", "1", "0"), browser.findElements(By.cssSelector("#batch-counts td")).stream()
                    .map(WebElement::getText).toList(), "total, pending, succeeded, dead-lettered, cancelled");
            assertEquals("COMPLETE", browser.findElement(By.id("batch-callbacks")).getText(), "the callbacks it has: onComplete");
            assertTrue(browser.findElements(By.id("batch-cancel")).isEmpty(), "an ended batch has no cancel");
            shot("batch");
            browser.findElement(By.linkText(failed.toString())).click();
            assertEquals("DEAD_LETTERED", browser.findElement(By.id("job-state")).getText(), "the failed job's page");

            String metrics;
            try (java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient()) {
                metrics = http.send(java.net.http.HttpRequest.newBuilder(board.uri().resolve("/metrics")).build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString()).body();
            }
            assertTrue(metrics.contains("binomic_batch_callbacks_started_total{queue=\"" + queue + "\",task=\"pack\"} 1\n")
                    && metrics.contains("binomic_batches_submitted_total 1\n"), metrics);

            io.binomic.core.BatchHandle open = flows.batch().add(waiting, new Order("c")).add(waiting, new Order("d")).submit();
            browser.get(board.uri().resolve("/batches/" + open.id()).toString());
            assertEquals("RUNNING", browser.findElement(By.id("batch-state")).getText());
            browser.findElement(By.id("batch-cancel")).click();
            browser.switchTo().alert().accept();
            awaitFlash("batch " + open.id() + ": CANCELLED");
            assertTrue(open.status().orElseThrow().cancelRequested(), "the broker has the batch cancelled");

            io.binomic.core.WorkflowHandle workflow = flows.submit(io.binomic.core.Workflow.builder()
                    .add("hold", waiting, new Order("e"))
                    .add("then", pack, new Order("f"), io.binomic.core.Workflow.dependsOn("hold"))
                    .build());
            browser.findElement(By.id("nav-workflows")).click();
            browser.findElement(By.id("workflow-id")).sendKeys(workflow.id().toString());
            browser.findElement(By.id("workflow-search")).click();
            assertEquals("RUNNING", browser.findElement(By.id("workflow-state")).getText());
            assertEquals("WAITING", browser.findElement(By.cssSelector("#workflow-nodes tr[data-node='then'] td.state")).getText());
            assertEquals("hold", browser.findElement(By.cssSelector("#workflow-nodes tr[data-node='then'] td.depends")).getText());
            assertEquals("skip", browser.findElement(By.cssSelector("#workflow-nodes tr[data-node='then'] td.if-fails")).getText(),
                    "what it does if hold fails: the default");
            shot("workflow");
            browser.findElement(By.id("workflow-cancel")).click();
            browser.switchTo().alert().accept();
            awaitFlash("workflow " + workflow.id() + ": CANCELLED");
            assertEquals("CANCELLED", browser.findElement(By.cssSelector("#workflow-nodes tr[data-node='then'] td.state")).getText());
            assertTrue(workflow.status().orElseThrow().cancelRequested(), "the broker has the workflow cancelled");
            assertEquals(JobState.CANCELLED, flows.job(waiting, workflow.status().orElseThrow().node("hold").orElseThrow().jobId())
                    .status().state(), "its queued job will not run");
        }
    }

    @Test
    void aReadOnlyDashboardShowsNoButtonAndRefusesAPost() throws Exception {
        try (Dashboard readOnly = binomic.dashboard().port(0).readOnly(true).start()) {
            browser.get(readOnly.uri().resolve("/queues").toString());
            assertTrue(browser.findElement(By.id("queue-controls")).getText().contains(QUEUE));
            assertFalse(browser.getPageSource().contains("<button"), "no button in read-only mode");
            java.net.HttpURLConnection c = (java.net.HttpURLConnection) readOnly.uri().resolve("/queues/pause").toURL().openConnection();
            c.setRequestMethod("POST");
            c.setDoOutput(true);
            c.getOutputStream().write(("queue=" + QUEUE).getBytes());
            assertEquals(403, c.getResponseCode());
            assertFalse(binomic.queues().isPaused(QUEUE));
        }
    }
}
