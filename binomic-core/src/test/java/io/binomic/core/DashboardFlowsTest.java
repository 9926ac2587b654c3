package io.binomic.core;

import static io.binomic.core.DashboardMetricsTest.get;
import static io.binomic.core.DashboardMetricsTest.raw;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.NonRetryableException;
import io.binomic.api.Task;
import io.binomic.api.WorkflowStatus;
import io.binomic.core.internal.web.Promtool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The dashboard's batch and workflow pages and their metrics, on the memory broker: a page by id
 * with counts, callbacks, failed jobs linked to their pages; a workflow's jobs in order with their
 * dependencies; cancel as the CLI's; 404 for an unknown id, 400 for a malformed one, a page that
 * says so on a broker without batches; the callback counters and lag histogram of {@code /metrics}.
 */
class DashboardFlowsTest {
    record Item(String name) { }

    private static final Task<Item, Void> work = Task.builder("work", Item.class).queue("flows").maxAttempts(1).build();
    private static final Task<Item, Void> slow = Task.builder("slow", Item.class).queue("flows-slow").build();
    private static final Task<Item, Void> done = Task.builder("batch-done", Item.class).queue("flows-callbacks").build();
    private final CountDownLatch release = new CountDownLatch(1);
    private Binomic binomic;

    @AfterEach
    void close() {
        release.countDown();
        if (binomic != null) {
            binomic.close();
        }
    }

    private Binomic started() {
        binomic = Binomic.builder()
                .handle(work, item -> {
                    if (item.name().startsWith("bad")) {
                        throw new NonRetryableException("refused <" + item.name() + ">");
                    }
                    return null;
                })
                .handle(slow, item -> {
                    release.await(30, TimeUnit.SECONDS);
                    return null;
                })
                .handle(done, item -> null)
                .build().start();
        return binomic;
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        for (int i = 0; i < 400; i++) {
            if (condition.getAsBoolean()) {
                return;
            }
            Thread.sleep(25);
        }
        throw new AssertionError("not within 10 s: " + what);
    }

    private static String csrf(String page) {
        Matcher m = Pattern.compile("name=\"csrf\" value=\"([0-9a-f]+)\"").matcher(page);
        assertTrue(m.find(), page);
        return m.group(1);
    }

    @Test
    void aBatchPageShowsCountsCallbacksAndFailedJobsLinkedAndItsCancelWorksAsTheCliOne() throws Exception {
        Binomic b = started();
        b.startWorker();
        BatchHandle finished = b.batch().add(work, new Item("good")).add(work, new Item("bad-1")).add(work, new Item("good-2"))
                .onComplete(done, new Item("complete")).submit();
        await("the batch completed", () -> finished.status().map(s -> s.fired().contains(BatchStatus.Callback.COMPLETE)).orElse(false));
        BatchStatus s = finished.status().orElseThrow();
        UUID failed = s.failedJobs().getFirst();
        BatchHandle running = b.batch().add(slow, new Item("held")).add(slow, new Item("held-2")).submit();
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            URI base = dashboard.uri();
            // found by an outside tester: each lookup page named the other's handle
            for (String section : List.of("batch", "workflow")) {
                String lookup = get(base.resolve(section.equals("batch") ? "/batches/" : "/workflows/"), null);
                String handle = section.equals("batch") ? "BatchHandle" : "WorkflowHandle";
                String other = section.equals("batch") ? "WorkflowHandle" : "BatchHandle";
                assertTrue(lookup.contains("Give a " + section + " id (" + handle + ".id(), or TaskContext." + section + "Id() in one of its"
                        + " jobs)") && !lookup.contains(other), lookup);
            }
            String page = get(base.resolve("/batches/" + finished.id()), null);
            assertTrue(page.startsWith("200 "), page);
            assertTrue(page.contains("<td id=\"batch-state\">FAILED</td>"), page);
            assertTrue(page.contains("<td class=\"total\">3</td><td class=\"pending\">0</td><td class=\"succeeded\">2</td>"
                    + "<td class=\"dead nonzero\">1</td><td class=\"cancelled\">0</td>"), page);
            assertTrue(page.contains("3 of 3 ended (100%)"), page);
            assertTrue(page.contains("<p id=\"batch-callbacks\">COMPLETE</p>"), "the callbacks it has, onComplete: " + page);
            assertTrue(page.contains("<a href=\"/jobs?id=" + failed + "\">" + failed + "</a>"), "the failed job links to its page: " + page);
            assertFalse(page.contains("id=\"batch-cancel\""), "an ended batch has nothing to cancel");
            assertTrue(get(base.resolve("/batches?id=" + finished.id()), null).contains("<td id=\"batch-state\">FAILED</td>"),
                    "the lookup form's address shows the same page");

            String open = get(base.resolve("/batches/" + running.id()), null);
            assertTrue(open.contains("<td id=\"batch-state\">RUNNING</td>") && open.contains("0 of 2 ended (0%)"), open);
            assertTrue(open.contains("id=\"batch-cancel\""), open);
            String refused = raw(base, "POST", "/batches/cancel", "id=" + running.id());
            assertTrue(refused.startsWith("HTTP/1.1 403"), "no change without the page's CSRF token: " + refused);
            String foreign = raw(base, "POST", "/batches/cancel", "csrf=" + csrf(open) + "&id=" + running.id(),
                    "Origin: http://attacker.example:" + base.getPort());
            assertTrue(foreign.startsWith("HTTP/1.1 403"), foreign);
            assertTrue(running.status().orElseThrow().open() || !running.status().orElseThrow().cancelRequested(), "nothing changed");
            String cancelled = raw(base, "POST", "/batches/cancel", "csrf=" + csrf(open) + "&id=" + running.id());
            assertTrue(cancelled.startsWith("HTTP/1.1 303"), cancelled);
            String location = cancelled.lines().filter(l -> l.startsWith("Location: ")).findFirst().orElseThrow().substring(10);
            assertTrue(location.startsWith("/batches/" + running.id() + "?done="), location);
            String flash = raw(base, "GET", location, "");
            // its jobs may be queued still or running already: the outcome says which, in a workflow cancel's words
            assertTrue(Pattern.compile("id=\"flash\">batch " + running.id() + ": (CANCELLED|CANCEL_REQUESTED)</p>").matcher(flash).find(),
                    "the flash of the cancel: " + flash);
            assertTrue(running.status().orElseThrow().cancelRequested(), "the broker has the batch cancelled");
            String badId = raw(base, "POST", "/batches/cancel", "csrf=" + csrf(open) + "&id=nope");
            assertTrue(badId.startsWith("HTTP/1.1 400") && badId.contains("'nope' is not a batch id"), badId);
        }
        BatchHandle other = b.batch().add(slow, new Item("held-3")).submit();
        try (Dashboard readOnly = b.dashboard().port(0).readOnly(true).start()) {
            String page = get(readOnly.uri().resolve("/batches/" + other.id()), null);
            assertTrue(page.contains("<td id=\"batch-state\">RUNNING</td>") && !page.contains("method=\"post\""), "no cancel in read-only mode: " + page);
            assertTrue(raw(readOnly.uri(), "POST", "/batches/cancel", "id=" + other.id()).startsWith("HTTP/1.1 403"));
            assertFalse(other.status().orElseThrow().cancelRequested(), "nothing changed");
        }
    }

    @Test
    void aWorkflowPageListsEachJobAfterItsDependenciesLinkedToItsJobPageAndItsCancelStopsTheRest() throws Exception {
        Binomic b = started();
        b.startWorker();
        WorkflowHandle flow = b.submit(Workflow.builder()
                .add("fetch", work, new Item("fetch"))
                .add("resize", slow, new Item("resize"), Workflow.dependsOn("fetch"))
                .add("thumb", work, new Item("thumb"), Workflow.dependsOn("fetch"))
                .add("publish", work, new Item("publish"), Workflow.dependsOn("resize", "thumb"))
                .build());
        await("thumb ran", () -> flow.status().orElseThrow().node("thumb").orElseThrow().state() == WorkflowStatus.NodeState.SUCCEEDED);
        WorkflowStatus s = flow.status().orElseThrow();
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            URI base = dashboard.uri();
            String page = get(base.resolve("/workflows/" + flow.id()), null);
            assertTrue(page.startsWith("200 ") && page.contains("<td id=\"workflow-state\">RUNNING</td>"), page);
            List<String> order = Pattern.compile("<tr data-node=\"([a-z]+)\">").matcher(page).results().map(r -> r.group(1)).toList();
            assertEquals(List.of("fetch", "resize", "thumb", "publish"), order);
            String publish = page.substring(page.indexOf("<tr data-node=\"publish\">"));
            publish = publish.substring(0, publish.indexOf("</tr>"));
            UUID publishId = s.node("publish").orElseThrow().jobId();
            assertTrue(publish.contains("<td class=\"step\">3</td>") && publish.contains("<td class=\"state\">WAITING</td>")
                    && publish.contains("<td class=\"depends\">resize, thumb</td>") && publish.contains("<td>flows</td>")
                    && publish.contains("<td>work</td>") && publish.contains("<a href=\"/jobs?id=" + publishId + "\">"), publish);
            assertTrue(publish.contains("<td class=\"if-fails\">skip</td>"), "what it does if resize or thumb fails: " + publish);
            assertTrue(page.contains("<th>if one fails</th>"), page);
            String cancelled = raw(base, "POST", "/workflows/cancel", "csrf=" + csrf(page) + "&id=" + flow.id());
            assertTrue(cancelled.startsWith("HTTP/1.1 303"), cancelled);
            String location = cancelled.lines().filter(l -> l.startsWith("Location: ")).findFirst().orElseThrow().substring(10);
            String after = raw(base, "GET", location, "");
            assertTrue(after.contains("workflow " + flow.id() + ": CANCEL_REQUESTED"), after);
            release.countDown();
            await("the workflow ended cancelled", () -> flow.status().orElseThrow().state() == WorkflowStatus.State.CANCELLED);
            String ended = get(base.resolve("/workflows/" + flow.id()), null);
            assertTrue(ended.contains("<td id=\"workflow-state\">CANCELLED</td>") && !ended.contains("id=\"workflow-cancel\""), ended);
        }
    }

    @Test
    void aJobPageLinksToTheBatchOrWorkflowTheJobBelongsTo() throws Exception {
        Binomic b = started();
        b.startWorker();
        BatchHandle batch = b.batch().keepOpen().submit();
        UUID batchJob = batch.add(work, new Item("good"));
        await("the batch's job ran", () -> batch.status().orElseThrow().succeeded() == 1);
        WorkflowHandle flow = b.submit(Workflow.builder()
                .add("first", slow, new Item("first"))
                .add("then", work, new Item("then"), Workflow.dependsOn("first"))
                .build());
        UUID waiting = flow.status().orElseThrow().node("then").orElseThrow().jobId();
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            URI base = dashboard.uri();
            String batchPage = get(base.resolve("/jobs?id=" + batchJob), null);
            assertTrue(batchPage.contains("<tr><td>batch</td><td id=\"job-batch\"><a href=\"/batches/" + batch.id() + "\">"
                    + batch.id() + "</a></td></tr>"), batchPage);
            assertFalse(batchPage.contains("id=\"job-workflow\""), batchPage);
            String waitingPage = get(base.resolve("/jobs?id=" + waiting), null);
            assertTrue(waitingPage.contains("<td id=\"job-state\">WAITING</td>"), "a job that never ran: " + waitingPage);
            assertTrue(waitingPage.contains("<tr><td>workflow</td><td id=\"job-workflow\"><a href=\"/workflows/" + flow.id() + "\">"
                    + flow.id() + "</a></td></tr>"), waitingPage);
            assertFalse(waitingPage.contains("id=\"job-batch\""), waitingPage);
        }
    }

    @Test
    void anUnknownIdIsA404AMalformedOneA400AndTheLookupPagesAreInTheNavigation() throws Exception {
        Binomic b = started();
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            URI base = dashboard.uri();
            UUID unknown = UUID.randomUUID();
            String batch = get(base.resolve("/batches/" + unknown), null);
            assertTrue(batch.startsWith("404 ") && batch.contains("id=\"not-found\"") && batch.contains("No batch " + unknown), batch);
            String workflow = get(base.resolve("/workflows?id=" + unknown), null);
            assertTrue(workflow.startsWith("404 ") && workflow.contains("No workflow " + unknown), workflow);
            String bad = get(base.resolve("/workflows/%3Cscript%3E"), null);
            assertTrue(bad.startsWith("400 ") && bad.contains("&#39;&lt;script&gt;&#39; is not a workflow id") && !bad.contains("<script>"), bad);
            for (String padded : List.of("/batches/1-2-3-4-5", "/batches?id=" + unknown.toString().substring(1),
                    "/workflows/" + unknown.toString().substring(0, 35), "/jobs?id=1-2-3-4-5")) {
                String refused = get(base.resolve(padded), null);
                // The job page answers its search form's errors on the page, as before.
                assertTrue((padded.startsWith("/jobs") || refused.startsWith("400 ")) && refused.contains("id=\"bad-id\"")
                        && refused.contains("8-4-4-4-12 hex digits"), "not read as another, zero-padded id: " + padded + " " + refused);
            }
            String overview = get(base, null);
            assertTrue(overview.contains("<a href=\"/batches\" id=\"nav-batches\">Batches</a>")
                    && overview.contains("<a href=\"/workflows\" id=\"nav-workflows\">Workflows</a>"), overview);
            String lookup = get(base.resolve("/batches"), null);
            assertTrue(lookup.startsWith("200 ") && lookup.contains("id=\"batch-id\""), lookup);
        }
    }

    @Test
    void anIdOfAnotherKindIsNamedAndLinkedToItsPage() throws Exception {
        Binomic b = started();
        BatchHandle batch = b.batch().keepOpen().submit();
        WorkflowHandle flow = b.submit(Workflow.builder().add("first", slow, new Item("first")).build());
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            URI base = dashboard.uri();
            String asBatch = get(base.resolve("/batches?id=" + flow.id()), null);
            assertTrue(asBatch.startsWith("404 ") && asBatch.contains("No batch " + flow.id() + ": it is the id of a workflow: "
                    + "<a id=\"mistaken-id\" href=\"/workflows/" + flow.id() + "\">show that workflow</a>."), asBatch);
            String asWorkflow = get(base.resolve("/workflows/" + batch.id()), null);
            assertTrue(asWorkflow.startsWith("404 ") && asWorkflow.contains("it is the id of a batch: <a id=\"mistaken-id\" href=\"/batches/"
                    + batch.id() + "\">"), asWorkflow);
            String asJob = get(base.resolve("/jobs?id=" + batch.id()), null);
            assertTrue(asJob.contains("it is the id of a batch: <a id=\"mistaken-id\" href=\"/batches/" + batch.id() + "\">"), asJob);
        }
    }

    @Test
    void aBrokerWithoutBatchesOrWorkflowsGetsAPageThatSaysSo() throws Exception {
        ForwardingBroker broker = new ForwardingBroker(new io.binomic.core.internal.memory.MemoryBrokerProvider()
                .create(io.binomic.api.BrokerConfig.defaults()));
        binomic = Binomic.builder().broker(broker).scheduler(broker.scheduler()).build().start();
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            for (String noun : List.of("batch", "workflow")) {
                String page = get(dashboard.uri().resolve((noun.equals("batch") ? "/batches/" : "/workflows/") + UUID.randomUUID()), null);
                assertTrue(page.startsWith("501 ") && page.contains("id=\"unsupported\"") && page.contains("has no " + (noun.equals("batch") ? "batches" : "workflows")), page);
            }
        }
    }

    @Test
    void metricsCountBatchesWorkflowsAndCallbacksAndTheirLagAndPassPromtool() throws Exception {
        Binomic b = started();
        b.startWorker();
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            URI metrics = dashboard.uri().resolve("/metrics");
            String before = get(metrics, null);
            assertTrue(before.contains("\nbinomic_batches_submitted_total 0\n") && before.contains("\nbinomic_workflows_submitted_total 0\n"), before);
            assertFalse(before.contains("binomic_batch_callbacks_started_total{"), before);
            for (int i = 1; i <= 2; i++) {
                b.batch().add(work, new Item("good")).onComplete(done, new Item("complete")).onSuccess(done, new Item("ok")).submit();
                long expected = 2L * i;
                await("both callbacks ran", () -> b.taskStats().stream().filter(t -> t.task().equals("batch-done"))
                        .mapToLong(TaskStats::succeeded).sum() == expected);
                String now = get(metrics, null);
                assertTrue(now.contains("\nbinomic_batch_callbacks_started_total{queue=\"flows-callbacks\",task=\"batch-done\"} " + expected + "\n"),
                        "the count rises as batches complete: " + now);
            }
            WorkflowHandle flow = b.submit(Workflow.builder().add("a", slow, new Item("a")).build());
            var outcome = flow.cancel();
            assertTrue(outcome == io.binomic.api.JobHandle.CancelOutcome.CANCELLED
                    || outcome == io.binomic.api.JobHandle.CancelOutcome.CANCEL_REQUESTED, outcome.toString());
            String after = get(metrics, null).substring(4);
            for (String line : List.of(
                    "binomic_batches_submitted_total 2",
                    "binomic_workflows_submitted_total 1",
                    "binomic_workflows_cancelled_total 1",
                    "binomic_batches_cancelled_total 0",
                    "binomic_batch_callbacks_started_total{queue=\"flows-callbacks\",task=\"batch-done\"} 4",
                    "binomic_batch_callback_lag_seconds_count{queue=\"flows-callbacks\",task=\"batch-done\"} 4",
                    "binomic_batch_callback_lag_seconds_bucket{queue=\"flows-callbacks\",task=\"batch-done\",le=\"+Inf\"} 4")) {
                assertTrue(after.lines().anyMatch(line::equals), "missing line " + line + " in\n" + after);
            }
            assertTrue(after.contains("binomic_batch_callback_lag_seconds_sum{queue=\"flows-callbacks\",task=\"batch-done\"} "), after);
            Promtool.assertValid(after);
        }
    }

    /** The broker's own counts, by state, as gauges: every end counted once, whichever process ended it. */
    @Test
    void metricsShowTheBrokerWideCountsOfBatchesAndWorkflowsByStateAndPassPromtool() throws Exception {
        Binomic b = started();
        b.startWorker();
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            URI metrics = dashboard.uri().resolve("/metrics");
            b.batch().add(work, new Item("good")).submit();
            b.batch().add(work, new Item("bad")).submit();
            b.batch().add(slow, new Item("held")).submit().cancel();
            b.submit(Workflow.builder().add("a", work, new Item("good")).build());
            b.submit(Workflow.builder().then("a", work, new Item("bad")).then("b", work, new Item("good")).build());
            b.submit(Workflow.builder().then("a", slow, new Item("held")).then("b", work, new Item("good")).build()).cancel();
            List<String> expected = new ArrayList<>();
            for (String family : List.of("binomic_batches", "binomic_workflows")) {
                expected.addAll(List.of(family + "{state=\"open\"} 0", family + "{state=\"succeeded\"} 1",
                        family + "{state=\"failed\"} 1", family + "{state=\"cancelled\"} 1"));
            }
            String[] last = {""};
            try {
                await("every batch and workflow counted in its end state", () -> {
                    try {
                        last[0] = get(metrics, null).substring(4);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                    return expected.stream().allMatch(line -> last[0].lines().anyMatch(line::equals));
                });
            } catch (AssertionError e) {
                throw new AssertionError(e.getMessage() + "; expected " + expected + " in\n" + last[0], e);
            }
            assertTrue(last[0].contains("# TYPE binomic_batches gauge\n") && last[0].contains("# TYPE binomic_workflows gauge\n"), last[0]);
            Promtool.assertValid(last[0]);
        }
    }
}
