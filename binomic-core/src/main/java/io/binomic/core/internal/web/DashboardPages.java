package io.binomic.core.internal.web;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import io.binomic.api.BrokerException;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterGroup;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.TaskMode;
import io.binomic.api.TraceContext;
import io.binomic.api.spi.Activity;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.api.spi.BrokerHealthReport.ServerSetting;
import io.binomic.api.spi.Message;
import io.binomic.core.Binomic;
import io.binomic.core.TaskStats;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import io.binomic.core.internal.ActivityFlusher;
import io.binomic.core.internal.CanonicalIds;
import io.binomic.core.internal.CoreAccess;
import io.binomic.core.internal.process.SlotSnapshot;
import io.binomic.core.internal.schedule.Trigger;
import java.io.IOException;
import java.io.InputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.function.IntToLongFunction;
import java.util.function.Supplier;

/**
 * The dashboard's pages: overview, workers, jobs, dead letters, schedules, queues, and batches and
 * workflows by id ({@link FlowPages}). Rendered on the server as plain HTML (no build step, no CDN,
 * works offline), with one small script for confirmations and live refresh. Changes are POSTs carrying the page's CSRF token; in read-only
 * mode there are no buttons, and a POST is refused.
 */
public final class DashboardPages implements HttpHandler {
    static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);
    private static final DateTimeFormatter ZONED = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss z");
    private static final int LETTERS_SHOWN = 50;
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final int PAYLOAD_SHOWN = 400;
    private static final String JOBS = "/jobs";
    private static final String[][] NAV = {
            {"/", "Overview"}, {"/workers", "Workers"}, {JOBS, "Jobs"}, {"/dead-letters", "Dead letters"},
            {"/schedules", "Schedules"}, {"/queues", "Queues"}, {FlowPages.BATCHES, "Batches"}, {FlowPages.WORKFLOWS, "Workflows"}};

    private final Binomic binomic;
    private final Supplier<List<SlotSnapshot>> slots;
    private final IntToLongFunction restarts;
    private final boolean readOnly;
    /** The job page: a job's status by id, and its cancel. */
    private final JobPage jobPage;
    /** One per server: a page from another origin cannot read it, so it cannot forge a change. */
    private final String csrf;
    private final FlowPages flows;
    /**
     * What the last changes did, by a random id the redirect carries ({@code ?done=<id>}): the page
     * shows only messages this server wrote, never text a link puts in its address. Shown once.
     */
    private final Map<String, String> flashes = Collections.synchronizedMap(new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, String> eldest) { return size() > 100; }
    });

    /**
     * @param slots a master's worker slots, or null in an application
     * @param restarts restarts per slot, when {@code slots} is given
     */
    public DashboardPages(Binomic binomic, Supplier<List<SlotSnapshot>> slots, IntToLongFunction restarts,
                          boolean readOnly) {
        this.binomic = binomic;
        this.slots = slots;
        this.restarts = restarts;
        this.readOnly = readOnly;
        this.jobPage = new JobPage(binomic, this::queues, readOnly ? null
                : id -> actionForm("/jobs/cancel", Map.of("id", id.toString()), "Cancel job", "job-cancel", "Cancel job " + id + "?"));
        this.csrf = randomHex(24);
        this.flows = new FlowPages(binomic, readOnly, this::actionForm);
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        String path = exchange.getRequestURI().getPath();
        if (exchange.getRequestMethod().equals("POST")) {
            post(exchange, path);
            return;
        }
        if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
            DashboardServer.send(exchange, 405, "text/plain; charset=utf-8", "use GET or POST\n");
            return;
        }
        if (StaticFiles.claims(path)) {
            String file = StaticFiles.name(path);
            if (file == null) {
                notFound(exchange, path);
            } else {
                StaticFiles.send(exchange, file);
            }
            return;
        }
        Map<String, String> query = form(exchange.getRequestURI().getRawQuery());
        if (FlowPages.section(path) != null) {
            flowPage(exchange, path, query);
            return;
        }
        // A job's page has an address of its own too, as a batch's and a workflow's have: /jobs/<id> (/jobs/ the search form).
        boolean jobPath = path.startsWith(JOBS + "/");
        String page = jobPath ? JOBS : path;
        String askedId = jobPath ? path.substring(JOBS.length() + 1) : query.get("id");
        String title = Arrays.stream(NAV).filter(item -> item[0].equals(page)).map(item -> item[1]).findFirst().orElse(null);
        if (title == null) {
            notFound(exchange, path);
            return;
        }
        // A malformed id is the request's fault, as on the batch and workflow pages: the page says so, with 400.
        int status = page.equals(JOBS) && askedId != null && !askedId.isBlank() && JobPage.jobId(askedId) == null ? 400 : 200;
        Html body;
        boolean[] jobMissing = {false};
        try {
            body = BrokerDeadline.within(() -> {
                Html h = new Html();
                switch (page) {
                    case "/" -> overview(h);
                    case "/workers" -> workers(h);
                    case JOBS -> jobMissing[0] = !jobPage.render(h, askedId);
                    case "/dead-letters" -> deadLetters(h);
                    case "/schedules" -> schedules(h);
                    default -> queues(h);
                }
                return h;
            });
        } catch (TimeoutException e) {
            // What needs no broker still shows: an outage is when operators look at their workers.
            body = new Html().raw("<p class=\"error\" id=\"broker-slow\">").text("The broker did not answer within "
                    + BrokerDeadline.LIMIT.toSeconds() + " s: is it down or unreachable? The workers keep what they run and write"
                    + " it when it is back; this page shows what needs no broker, and tries again on reload.").raw("</p>");
            switch (page) {
                case "/" -> localTasks(body);
                case "/workers" -> localWorkers(body);
                default -> { }
            }
        }
        send(exchange, jobMissing[0] ? 404 : status, title, page, flashes.remove(query.getOrDefault("done", "")), body);
    }

    /** A page of the dashboard's own look, so that a mistyped address still leads somewhere. */
    private void notFound(HttpExchange exchange, String path) throws IOException {
        send(exchange, 404, "Page not found", path, null, new Html().raw("<p class=\"error\" id=\"no-page\">")
                .text("This dashboard has no page at " + path + ".").raw(" The pages it has are in the bar above; start at the"
                        + " <a href=\"/\" id=\"home\">overview</a>.</p>"));
    }

    private void flowPage(HttpExchange exchange, String path, Map<String, String> query) throws IOException {
        String section = FlowPages.section(path);
        FlowPages.Page page;
        try {
            page = BrokerDeadline.within(() -> flows.render(path, query.get("id")));
        } catch (TimeoutException e) {
            page = new FlowPages.Page(503, section.equals(FlowPages.BATCHES) ? "Batches" : "Workflows", new Html()
                    .raw("<p class=\"error\" id=\"broker-slow\">").text("The broker did not answer within "
                            + BrokerDeadline.LIMIT.toSeconds() + " s: is it down or unreachable? Reload to try again.").raw("</p>"));
        }
        send(exchange, page.status(), page.title(), section, flashes.remove(query.getOrDefault("done", "")), page.body());
    }

    private void send(HttpExchange exchange, int status, String title, String path, String done, Html body) throws IOException {
        Html page = new Html();
        page.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Binomic: ").text(title)
                .raw("</title><link rel=\"icon\" href=\"/static/favicon.svg\" type=\"image/svg+xml\">"
                        + "<link rel=\"stylesheet\" href=\"/static/dashboard.css\"><script src=\"/static/dashboard.js\" defer></script>"
                        + "</head><body><header><span class=\"brand\">Binomic</span><nav>");
        for (String[] item : NAV) {
            page.raw("<a href=\"").raw(item[0]).raw("\"").raw(item[0].equals(path) ? " class=\"current\"" : "").raw(" id=\"nav-")
                    .raw(item[1].toLowerCase(Locale.ROOT).replace(' ', '-')).raw("\">").raw(item[1]).raw("</a>");
        }
        page.raw("</nav>").raw(readOnly ? "<span class=\"badge\">read-only</span>" : "").raw("</header><main><h1>").text(title).raw("</h1>");
        if (done != null && !done.isEmpty()) {
            page.raw("<p class=\"flash\" id=\"flash\">").text(done).raw("</p>");
        }
        page.raw(body.toString()).raw("</main><footer>").text(TIME.format(Instant.now())).raw("</footer></body></html>\n");
        exchange.getResponseHeaders().set("Content-Security-Policy",
                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'");
        DashboardServer.send(exchange, status, "text/html; charset=utf-8", page.toString());
    }

    // ---- pages

    private void overview(Html h) {
        serverSettings(h);
        h.raw("<section><h2>Queues</h2><table id=\"queues\" data-live=\"5000\">").head("queue", "ready", "pending", "delayed", "parked", "dead", "consumers", "paused").raw("<tbody>");
        for (String q : queues()) {
            try {
                QueueCounts counts = QueueCounts.read(binomic, q);
                QueueStats s = counts.stats();
                h.raw("<tr data-queue=\"").text(q).raw("\">").raw("<td>").text(q).raw("</td><td class=\"ready\">").text(s.ready())
                        .raw("</td><td class=\"pending\">").text(s.pending()).raw("</td><td class=\"delayed\">").text(counts.delayed())
                        .raw("</td><td class=\"parked\">").text(counts.parked())
                        .raw("</td><td class=\"dead").raw(s.deadLetters() > 0 ? " nonzero" : "").raw("\">").text(s.deadLetters())
                        .raw("</td><td>").text(s.consumers())
                        .raw("</td><td class=\"paused\">").text(binomic.queues().isPaused(q) ? "paused" : "").raw("</td></tr>\n");
            } catch (RuntimeException e) {
                h.row(q, "broker error: " + e.getMessage(), "", "", "", "", "", "");
            }
        }
        h.raw("</tbody></table></section>");
        OutboxReadings.section(h, OutboxReadings.read(CoreAccess.get().outboxes(binomic)));
        charts(h);
        localTasks(h);
    }

    /** The broker's servers' settings that put data at risk or could not be read: no broker call. */
    private void serverSettings(Html h) {
        List<ServerSetting> unsafe = new BinomicMetrics(binomic).serverSettings().stream().filter(s -> !s.safe()).toList();
        if (unsafe.isEmpty()) {
            return;
        }
        h.raw("<section><h2>Broker server settings</h2><table id=\"server-settings\">").head("server", "setting", "value", "risk")
                .raw("<tbody>");
        for (ServerSetting s : unsafe) {
            h.raw("<tr class=\"error\">").raw("<td>").text(s.server()).raw("</td><td>").text(s.name()).raw("</td><td>")
                    .text(s.value().orElse("unknown")).raw("</td><td>").text(s.warning().orElse("")).raw("</td></tr>\n");
        }
        h.raw("</tbody></table></section>");
    }

    /** What this process's workers ran: no broker call. Left out where no worker runs (a master's, a producer's dashboard). */
    private void localTasks(Html h) {
        List<TaskStats> stats = binomic.taskStats();
        if (stats.isEmpty() && binomic.workers().isEmpty()) {
            h.raw("<section><p class=\"hint\" id=\"no-local-tasks\">This process runs no worker, so it has no task counts of its own:"
                    + " the charts above show what every worker on these queues ran.</p></section>");
            return;
        }
        h.raw("<section><h2>Tasks run by this process</h2><table id=\"tasks\">")
                .head("queue", "task", "succeeded", "failed", "retried", "dead-lettered", "mean", "max").raw("<tbody>");
        stats.forEach(t -> h.row(t.queue(), t.task(), t.succeeded(), t.failed(), t.retried(), t.deadLettered(), millis(t.meanDuration()),
                millis(t.maxDuration())));
        h.raw("</tbody></table><p class=\"hint\">For alerting and longer history, scrape <a href=\"/metrics\">/metrics</a> with Prometheus.</p></section>");
    }

    /** The last hour of every worker of every process on these queues, from the broker's minute buckets. */
    private void charts(Html h) {
        Instant now = Instant.now();
        List<List<ActivityBucket>> perQueue = new ArrayList<>();
        String problem = null;
        for (String q : queues()) {
            try {
                perQueue.add(CoreAccess.get().broker(binomic).capability(Activity.class)
                        .map(a -> a.activity(q, now.minusSeconds(60L * ActivityCharts.MINUTES))).orElse(List.of()));
            } catch (RuntimeException e) {
                problem = "broker error: " + e.getMessage();
            }
        }
        h.raw("<section id=\"charts\" data-live=\"5000\"><h2>Last hour, every worker</h2>");
        if (problem != null) {
            h.raw("<p class=\"error\">").text(problem).raw("</p>");
        }
        ActivityCharts.render(h, ActivityCharts.lastHour(perQueue, now));
        h.raw("<p class=\"hint\">Workers add their counts every ").text(ActivityFlusher.PERIOD.toSeconds())
                .raw(" s (one write per queue, not per task), so the current minute lags by that much.</p></section>");
    }

    private void workers(Html h) {
        localWorkers(h);
        h.raw("<section><h2>Consumers the broker knows</h2><table id=\"consumers\">").head("queue", "consumers").raw("<tbody>");
        for (String q : queues()) {
            try {
                h.row(q, binomic.queueStats(q).consumers());
            } catch (RuntimeException e) {
                h.row(q, "broker error: " + e.getMessage());
            }
        }
        h.raw("</tbody></table></section>");
    }

    /** This process's workers and a master's worker JVMs: no broker call, so it shows while the broker is down. */
    private void localWorkers(Html h) {
        h.raw("<section><h2>Workers in this process</h2><table id=\"local-workers\">")
                .head("consumer", "health", "in flight", "succeeded", "held", "failed", "retried", "dead-lettered", "stale settlements")
                .raw("<tbody>");
        for (Worker w : binomic.workers()) {
            WorkerCounters c = w.counters();
            var health = w.health();
            h.row(w.consumerName(), health(health.state().name(), health.problem()), c.inFlight(), c.writtenSucceeded(),
                    c.held(), c.failed(), c.retried(), c.deadLettered(), c.staleSettlements());
        }
        h.raw("</tbody></table></section>");
        if (slots != null) {
            h.raw("<section><h2>Worker JVMs of this master</h2><table id=\"slots\">")
                    .head("slot", "pid", "state", "health", "last heartbeat", "supervision", "restarts", "in flight", "succeeded", "held",
                            "failed")
                    .raw("<tbody>");
            Instant now = Instant.now();
            for (SlotSnapshot s : slots.get()) {
                WorkerCounters c = s.counters();
                h.row(s.index(), s.pid(), s.state(), health(s.health().name(), s.problem()),
                        s.heartbeatAge(now).map(a -> millis(a) + " ago").orElse("never"), s.supervision(),
                        restarts.applyAsLong(s.index()), c.inFlight(), c.writtenSucceeded(), c.held(), c.failed());
            }
            h.raw("</tbody></table></section>");
        }
    }

    private void deadLetters(Html h) {
        for (String q : queues()) {
            List<DeadLetterGroup> groups;
            List<DeadLetter> letters;
            try {
                groups = binomic.deadLetters().groups(q);
                letters = binomic.deadLetters().list(q, DeadLetterFilter.all(), LETTERS_SHOWN);
            } catch (RuntimeException e) {
                h.raw("<section><h2>").text(q).raw("</h2><p class=\"error\">").text("broker error: " + e.getMessage()).raw("</p></section>");
                continue;
            }
            h.raw("<section class=\"dlq\" data-queue=\"").text(q).raw("\"><h2>").text(q).raw("</h2>");
            if (groups.isEmpty()) {
                h.raw("<p class=\"hint\">No dead letters.</p></section>");
                continue;
            }
            h.raw("<table class=\"groups\">").head("task", "reason", "error class", "count").raw("<tbody>");
            groups.forEach(g -> h.row(g.task(), g.reason(), g.errorClass(), g.count()));
            h.raw("</tbody></table><table class=\"letters\">")
                    .head("job", "task", "reason", "error", "attempts", "failed at", "payload", "trace", "entry", "").raw("<tbody>");
            for (DeadLetter d : letters) {
                String payload = d.message().map(m -> new String(m.payload(), StandardCharsets.UTF_8)).orElse(d.rawFields().getOrDefault("payload", ""));
                if (payload.length() > PAYLOAD_SHOWN) {
                    payload = payload.substring(0, PAYLOAD_SHOWN) + "...";
                }
                String trace = d.message().flatMap(Message::traceContext).map(TraceContext::traceId).orElse("");
                h.raw("<tr data-letter=\"").text(d.id()).raw("\">");
                // Users search by the job's id; the stream entry id is what replay and purge act on. Only a
                // tracked job has a page: an untracked one's would only say that no status is kept.
                h.raw("<td class=\"job\">");
                d.message().ifPresent(m -> {
                    if (m.isTracked()) {
                        h.raw("<a href=\"/jobs?id=").text(m.id()).raw("\">").text(m.id()).raw("</a>");
                    } else {
                        h.text(m.id());
                    }
                });
                h.raw("</td>");
                for (Object cell : new Object[] {d.task(), d.failure().reason(),
                        d.failure().errorClass() + ": " + d.failure().errorMessage(), d.failure().attempts(),
                        TIME.format(d.failure().failedAt()), payload, trace}) {
                    h.raw("<td>").text(cell).raw("</td>");
                }
                h.raw("<td class=\"entry\">").text(d.id()).raw("</td>");
                h.raw("<td class=\"actions\">");
                if (!readOnly) {
                    Map<String, String> fields = Map.of("queue", q, "letter", d.id());
                    h.raw(actionForm("/dead-letters/replay", fields, "Replay", "replay-" + d.id(), "Replay dead letter " + d.id() + " onto queue " + q + "?"));
                    h.raw(actionForm("/dead-letters/purge", fields, "Purge", "purge-" + d.id(), "Delete dead letter " + d.id() + " for good?"));
                }
                h.raw("</td></tr>\n");
            }
            h.raw("</tbody></table></section>");
        }
    }

    private void schedules(Html h) {
        h.raw("<table id=\"schedules\">").head("task", "queue", "mode", "when", "zone", "last fired", "next fire times").raw("<tbody>");
        Instant now = Instant.now();
        for (Task<?, ?> t : binomic.tasks().all()) {
            if (t.mode() != TaskMode.CRON && t.mode() != TaskMode.INTERVAL) {
                continue;
            }
            Trigger trigger = t.mode() == TaskMode.CRON ? Trigger.cron(t.cron().orElseThrow(), t.zone()) : Trigger.every(t.interval().orElseThrow());
            StringBuilder next = new StringBuilder();
            Instant at = now;
            for (int i = 0; i < 3; i++) {
                at = trigger.nextAfter(at);
                next.append(i == 0 ? "" : ", ").append(ZonedDateTime.ofInstant(at, t.zone()).format(ZONED));
            }
            String last;
            try {
                last = CoreAccess.get().scheduler(binomic).lastFiredTick(t.queue(), t.name())
                        .map(i -> ZonedDateTime.ofInstant(i, t.zone()).format(ZONED)).orElse("not in the last periods");
            } catch (RuntimeException e) {
                last = "broker error: " + e.getMessage();
            }
            h.raw("<tr data-task=\"").text(t.name()).raw("\">");
            for (Object cell : new Object[] {t.name(), t.queue(), t.mode(),
                    t.mode() == TaskMode.CRON ? String.valueOf(t.cron().orElseThrow()) : t.interval().orElseThrow(), t.zone()}) {
                h.raw("<td>").text(cell).raw("</td>");
            }
            h.raw("<td class=\"last-fired\">").text(last).raw("</td><td class=\"next\">").text(next).raw("</td></tr>\n");
        }
        h.raw("</tbody></table><p class=\"hint\">The CRON and INTERVAL tasks this process knows; each tick fires once however many clients schedule it. The last fired tick is the broker's, kept a few periods.</p>");
    }

    private void queues(Html h) {
        h.raw("<table id=\"queue-controls\">").head("queue", "state", "paused tasks", "").raw("<tbody>");
        for (String q : queues()) {
            boolean paused;
            String tasks;
            try {
                paused = binomic.queues().isPaused(q);
                tasks = String.join(", ", binomic.queues().pausedTasks(q));
            } catch (RuntimeException e) {
                h.row(q, "broker error: " + e.getMessage(), "", "");
                continue;
            }
            h.raw("<tr data-queue=\"").text(q).raw("\"><td>").text(q).raw("</td><td class=\"state\">").text(paused ? "paused" : "running")
                    .raw("</td><td>").text(tasks).raw("</td><td class=\"actions\">");
            if (!readOnly) {
                h.raw(paused ? actionForm("/queues/resume", Map.of("queue", q), "Resume", "resume-" + q, null)
                        : actionForm("/queues/pause", Map.of("queue", q), "Pause", "pause-" + q, "Pause queue " + q + "? Its running jobs finish; no new one starts."));
            }
            h.raw("</td></tr>\n");
        }
        h.raw("</tbody></table>");
        List<LimitReadings.Limit> limits = new ArrayList<>();
        for (String q : queues()) {
            try {
                limits.addAll(LimitReadings.read(binomic, q, () -> binomic.queueStats(q).pending()));
            } catch (RuntimeException e) {
                h.raw("<p class=\"error\">").text("the limits of " + q + " could not be read: " + e.getMessage()).raw("</p>");
            }
        }
        LimitReadings.section(h, limits);
    }

    // ---- changes

    private void post(HttpExchange exchange, String path) throws IOException {
        if (readOnly) {
            DashboardServer.send(exchange, 403, "text/plain; charset=utf-8", "this dashboard is read-only\n");
            return;
        }
        Map<String, String> form;
        try (InputStream in = exchange.getRequestBody()) {
            form = form(new String(in.readNBytes(16 * 1024), StandardCharsets.UTF_8));
        }
        if (!MessageDigest.isEqual(csrf.getBytes(StandardCharsets.UTF_8),
                form.getOrDefault("csrf", "").getBytes(StandardCharsets.UTF_8))) {
            DashboardServer.send(exchange, 403, "text/plain; charset=utf-8", "missing or stale CSRF token: reload the page and try again\n");
            return;
        }
        String[] back = {path.substring(0, path.lastIndexOf('/'))};
        String done;
        // A change waits for the broker no longer than a page does: while it is down the operator is
        // told so at once, and what became of the change, instead of an error after the client's retries.
        try {
            done = BrokerDeadline.within(() -> act(path, form, back));
        } catch (TimeoutException e) {
            DashboardServer.send(exchange, 503, "text/plain; charset=utf-8", "the broker did not answer within "
                    + BrokerDeadline.LIMIT.toSeconds() + " s: is it down or unreachable? The change was not confirmed; it may still be"
                    + " made if the broker answers later: reload the page to see whether it was, and try again if not\n");
            return;
        } catch (BrokerException e) {
            DashboardServer.send(exchange, 503, "text/plain; charset=utf-8", "the broker failed the change: " + e.getMessage()
                    + "\nReload the page to see what holds now, and try again once the broker answers\n");
            return;
        }
        if (done == null) {
            DashboardServer.send(exchange, 404, "text/plain; charset=utf-8", "no such action\n");
            return;
        }
        String flash = randomHex(12);
        flashes.put(flash, done);
        exchange.getResponseHeaders().set("Location", back[0] + (back[0].contains("?") ? "&" : "?") + "done=" + flash);
        exchange.sendResponseHeaders(303, -1);
    }

    /**
     * Makes the change {@code path} asks for; returns what to flash (null when there is no such
     * change), and sets {@code back[0]} to the page to go back to.
     */
    private String act(String path, Map<String, String> form, String[] back) {
        String q = form.getOrDefault("queue", "");
        String done;
        switch (path) {
            case "/jobs/cancel" -> {
                String text = form.getOrDefault("id", "");
                UUID id = CanonicalIds.parse(text).orElseThrow(() -> new IllegalArgumentException(CanonicalIds.refusal(text, "job")));
                back[0] += "?id=" + id;
                done = "job " + id + ": " + binomic.job(id).cancel();
            }
            case "/batches/cancel", "/workflows/cancel" -> {
                FlowPages.Done cancelled = flows.cancel(path, form);
                back[0] = cancelled.back();
                done = cancelled.message();
            }
            case "/dead-letters/replay" -> {
                String letter = requireLetter(form);
                done = binomic.deadLetters().replayOne(requireQueue(q), letter) ? "replayed " + letter + " onto " + q
                        : "no dead letter " + letter + " of queue " + q + " could be replayed: it is gone, or its message cannot be decoded";
            }
            case "/dead-letters/purge" -> {
                String letter = requireLetter(form);
                done = binomic.deadLetters().purgeOne(requireQueue(q), letter) ? "purged " + letter
                        : "no dead letter " + letter + " in queue " + q + ": nothing purged";
            }
            case "/queues/pause" -> {
                binomic.queues().pause(requireQueue(q));
                done = "paused " + q;
            }
            case "/queues/resume" -> {
                binomic.queues().resume(requireQueue(q));
                done = "resumed " + q;
            }
            default -> done = null;
        }
        return done;
    }

    private static String requireLetter(Map<String, String> form) {
        String letter = form.getOrDefault("letter", "").strip();
        if (letter.isEmpty()) {
            throw new IllegalArgumentException("no dead letter named: give its id as 'letter'");
        }
        return letter;
    }

    /** Only queues this client knows are changed: a forged name must not create keys. */
    private String requireQueue(String q) {
        if (!queues().contains(q)) {
            throw new IllegalArgumentException(q.isEmpty() ? "no queue named: give it as 'queue'" : "unknown queue '" + q + "'");
        }
        return q;
    }

    private String actionForm(String action, Map<String, String> fields, String label, String id, String confirm) {
        Html f = new Html();
        f.raw("<form method=\"post\" action=\"").raw(action).raw("\"");
        if (confirm != null) {
            f.raw(" data-confirm=\"").text(confirm).raw("\"");
        }
        f.raw("><input type=\"hidden\" name=\"csrf\" value=\"").raw(csrf).raw("\">");
        for (Map.Entry<String, String> e : new TreeMap<>(fields).entrySet()) {
            f.raw("<input type=\"hidden\" name=\"").raw(e.getKey()).raw("\" value=\"").text(e.getValue()).raw("\">");
        }
        f.raw("<button type=\"submit\" id=\"").text(id).raw("\">").text(label).raw("</button></form>");
        return f.toString();
    }

    private static String randomHex(int bytes) {
        byte[] random = new byte[bytes];
        RANDOM.nextBytes(random);
        return HexFormat.of().formatHex(random);
    }

    private List<String> queues() { return CoreAccess.get().queues(binomic); }

    static String millis(Duration d) { return d.toMillis() + " ms"; }

    /**
     * A worker's health as {@code binomic workers} words a refusal: Redis answers but refuses the worker's ACL user a
     * command (NOPERM), which an operator's grant fixes, not the network that "unreachable" points at.
     */
    static String health(String state, Optional<String> problem) {
        boolean refused = state.equals("BROKER_UNREACHABLE") && problem.filter(p -> p.contains("(NOPERM)")).isPresent();
        return (refused ? "BROKER REFUSED" : state) + problem.map(p -> ": " + p).orElse("");
    }

    static Map<String, String> form(String raw) {
        Map<String, String> m = new HashMap<>();
        if (raw == null || raw.isEmpty()) {
            return m;
        }
        for (String part : raw.split("&")) {
            int eq = part.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? part : part.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(part.substring(eq + 1), StandardCharsets.UTF_8);
            m.putIfAbsent(k, v);
        }
        return m;
    }
}
