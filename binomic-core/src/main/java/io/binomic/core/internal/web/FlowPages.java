package io.binomic.core.internal.web;

import io.binomic.api.BatchStatus;
import io.binomic.api.JobHandle;
import io.binomic.api.WorkflowStatus;
import io.binomic.api.WorkflowStatus.NodeState;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Workflows;
import io.binomic.core.Binomic;
import io.binomic.core.internal.CanonicalIds;
import io.binomic.core.internal.CoreAccess;
import io.binomic.core.internal.DependencyFailureWords;
import io.binomic.core.internal.MistakenIds;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The dashboard's batch and workflow pages, by id ({@code /batches/<id>}, {@code /workflows/<id>},
 * or {@code ?id=} from their lookup forms), and their cancels. They read what {@code binomic batch
 * show} and {@code binomic workflow show} read ({@code Binomic.batch(id)}, {@code Binomic.workflow(id)}),
 * and cancel as their {@code cancel} verbs do. There is no list: neither broker keeps an index of
 * batches or workflows, and a page must not scan the keyspace to find them.
 */
final class FlowPages {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'").withZone(ZoneOffset.UTC);
    /** Failed jobs of a batch linked one by one; a batch of a million failures must not make a page of a million links. */
    static final int FAILED_SHOWN = 100;
    static final String BATCHES = "/batches";
    static final String WORKFLOWS = "/workflows";

    /** A rendered page: its HTTP status, its title and its body. */
    record Page(int status, String title, Html body) { }

    /** What a cancel did: the page to go back to, and the message to show there. */
    record Done(String back, String message) { }

    /** Renders a POST form carrying the dashboard's CSRF token (the dashboard's own {@code actionForm}). */
    interface Forms {
        String form(String action, Map<String, String> fields, String label, String id, String confirm);
    }

    private final Binomic binomic;
    private final boolean readOnly;
    private final Forms forms;

    FlowPages(Binomic binomic, boolean readOnly, Forms forms) {
        this.binomic = binomic;
        this.readOnly = readOnly;
        this.forms = forms;
    }

    /** The navigation entry {@code path} belongs to ({@code /batches} or {@code /workflows}), or null for another page. */
    static String section(String path) {
        for (String s : List.of(BATCHES, WORKFLOWS)) {
            if (path.equals(s) || path.startsWith(s + "/")) {
                return s;
            }
        }
        return null;
    }

    /** The page at {@code path} (of {@link #section}), the id taken from the path or, from the lookup form, {@code id}. */
    Page render(String path, String queryId) {
        String section = section(path);
        boolean batch = section.equals(BATCHES);
        String id = path.length() > section.length() + 1 ? path.substring(section.length() + 1) : queryId;
        Html h = new Html();
        lookup(h, section, id);
        String noun = batch ? "batch" : "workflow";
        String title = batch ? "Batches" : "Workflows";
        Class<?> capability = batch ? Batches.class : Workflows.class;
        if (CoreAccess.get().broker(binomic).capability(capability).isEmpty()) {
            h.raw("<p class=\"error\" id=\"unsupported\">").text("This broker (" + CoreAccess.get().broker(binomic).getClass().getSimpleName()
                    + ") has no " + title.toLowerCase(Locale.ROOT) + ": they need a memory:// or a single-node redis:// broker.").raw("</p>");
            return new Page(501, title, h);
        }
        if (id == null || id.isBlank()) {
            h.raw("<p class=\"hint\">").text("Give a " + noun + " id (" + (batch ? "BatchHandle" : "WorkflowHandle")
                    + ".id(), or TaskContext." + noun + "Id() in one of its jobs). The broker keeps no list of " + title.toLowerCase(Locale.ROOT) + " to browse; 'binomic " + noun
                    + " show --id' reads the same.").raw("</p>");
            return new Page(200, title, h);
        }
        Optional<UUID> parsed = CanonicalIds.parse(id);
        if (parsed.isEmpty()) {
            h.raw("<p class=\"error\" id=\"bad-id\">").text(CanonicalIds.refusal(id, noun)).raw("</p>");
            return new Page(400, title, h);
        }
        UUID uuid = parsed.get();
        boolean found = batch ? batch(h, uuid) : workflow(h, uuid);
        if (!found) {
            h.raw("<p class=\"error\" id=\"not-found\">").text("No " + noun + " " + uuid + ": ");
            Optional<String> kind = MistakenIds.kindOf(binomic, uuid, noun);
            if (kind.isPresent()) {
                mistakenId(h, kind.get(), uuid);
            } else {
                h.text("a wrong id, or a " + noun + " past its retention (one day unless its builder's retention says otherwise).");
            }
            h.raw("</p>");
            return new Page(404, title, h);
        }
        return new Page(200, (batch ? "Batch " : "Workflow ") + uuid, h);
    }

    /** "it is the id of a workflow", linked to that page (the dashboard's own paths; a UUID, escaped all the same). */
    static void mistakenId(Html h, String kind, UUID id) {
        String path = switch (kind) {
            case MistakenIds.BATCH -> BATCHES + "/" + id;
            case MistakenIds.WORKFLOW -> WORKFLOWS + "/" + id;
            default -> "/jobs?id=" + id;
        };
        h.text("it is the id of a " + kind + ": ").raw("<a id=\"mistaken-id\" href=\"").text(path).raw("\">").text("show that " + kind)
                .raw("</a>.");
    }

    private static void lookup(Html h, String section, String id) {
        String noun = section.equals(BATCHES) ? "batch" : "workflow";
        h.raw("<form method=\"get\" action=\"").raw(section).raw("\" class=\"search\"><label>").text(noun.substring(0, 1).toUpperCase(Locale.ROOT) + noun.substring(1))
                .raw(" id <input name=\"id\" id=\"").raw(noun).raw("-id\" size=\"40\" value=\"").text(id == null ? "" : id)
                .raw("\"></label> <button type=\"submit\" id=\"").raw(noun).raw("-search\">Show</button></form>");
    }

    private boolean batch(Html h, UUID id) {
        Optional<BatchStatus> read = binomic.batch(id).status();
        if (read.isEmpty()) {
            return false;
        }
        BatchStatus s = read.get();
        int ended = s.total() - s.pending();
        h.raw("<table class=\"fields\" id=\"batch\"><tbody>");
        h.row("id", s.id());
        h.raw("<tr><td>state</td><td id=\"batch-state\">").text(s.state()).raw("</td></tr>");
        h.row("cancel requested", s.cancelRequested() ? "yes" : "no").row("created", TIME.format(s.createdAt()));
        h.raw("<tr><td>progress</td><td id=\"batch-progress\"><progress max=\"").text(Math.max(1, s.total())).raw("\" value=\"").text(ended)
                .raw("\"></progress> ").text(ended + " of " + s.total() + " ended" + (s.total() == 0 ? "" : " (" + ended * 100 / s.total() + "%)"))
                .raw("</td></tr>");
        h.raw("</tbody></table><h2>Jobs by outcome</h2><table id=\"batch-counts\">").head("total", "pending", "succeeded", "dead-lettered", "cancelled")
                .raw("<tbody><tr><td class=\"total\">").text(s.total()).raw("</td><td class=\"pending\">").text(s.pending())
                .raw("</td><td class=\"succeeded\">").text(s.succeeded()).raw("</td><td class=\"dead").raw(s.deadLettered() > 0 ? " nonzero" : "")
                .raw("\">").text(s.deadLettered()).raw("</td><td class=\"cancelled\">").text(s.cancelled()).raw("</td></tr></tbody></table>");
        h.raw("<h2>Callbacks enqueued</h2><p id=\"batch-callbacks\">").text(s.fired().isEmpty() ? "none yet"
                : String.join(", ", s.fired().stream().sorted().map(Enum::name).toList())).raw("</p>");
        if (!s.failedJobs().isEmpty()) {
            h.raw("<h2>Failed jobs (dead-lettered or cancelled)</h2><ul id=\"batch-failed\">");
            s.failedJobs().stream().limit(FAILED_SHOWN).forEach(job ->
                    h.raw("<li><a href=\"/jobs?id=").text(job).raw("\">").text(job).raw("</a></li>"));
            h.raw("</ul>");
            if (s.failedJobs().size() > FAILED_SHOWN) {
                h.raw("<p class=\"hint\">").text("... and " + (s.failedJobs().size() - FAILED_SHOWN) + " more").raw("</p>");
            }
        }
        if (!readOnly && (s.open() || s.pending() > 0)) {
            h.raw(forms.form(BATCHES + "/cancel", Map.of("id", id.toString()), "Cancel batch", "batch-cancel",
                    "Cancel batch " + id + "? Its queued jobs never run, its running ones are interrupted."));
        }
        return true;
    }

    private boolean workflow(Html h, UUID id) {
        Optional<WorkflowStatus> read = binomic.workflow(id).status();
        if (read.isEmpty()) {
            return false;
        }
        WorkflowStatus s = read.get();
        Map<NodeState, Integer> byState = new EnumMap<>(NodeState.class);
        s.nodes().forEach(n -> byState.merge(n.state(), 1, Integer::sum));
        h.raw("<table class=\"fields\" id=\"workflow\"><tbody>");
        h.row("id", s.id());
        h.raw("<tr><td>state</td><td id=\"workflow-state\">").text(s.state()).raw("</td></tr>");
        h.row("cancel requested", s.cancelRequested() ? "yes" : "no").row("created", TIME.format(s.createdAt()))
                .row("jobs", s.nodes().size() + (byState.isEmpty() ? "" : " (" + String.join(", ", byState.entrySet().stream()
                        .map(e -> e.getValue() + " " + e.getKey()).toList()) + ")"));
        h.raw("</tbody></table>");
        // The record lists each job after those it depends on: that order, with each job's depth
        // (the longest chain of dependencies before it), is the graph drawn as a table.
        Map<String, Integer> depth = new HashMap<>();
        h.raw("<h2>Jobs, each after those it depends on</h2><table id=\"workflow-nodes\">")
                .head("step", "job", "task", "queue", "state", "depends on", "if one fails", "job id").raw("<tbody>");
        for (WorkflowStatus.Node n : s.nodes()) {
            int d = n.dependsOn().stream().mapToInt(dep -> depth.getOrDefault(dep, 0) + 1).max().orElse(0);
            depth.put(n.name(), d);
            h.raw("<tr data-node=\"").text(n.name()).raw("\"><td class=\"step\">").text(d + 1).raw("</td><td class=\"name\">").text(n.name())
                    .raw("</td><td>").text(n.task()).raw("</td><td>").text(n.queue()).raw("</td><td class=\"state")
                    .raw(n.state() == NodeState.DEAD_LETTERED ? " error" : "").raw("\">").text(n.state()).raw("</td><td class=\"depends\">")
                    .text(n.dependsOn().isEmpty() ? "-" : String.join(", ", n.dependsOn())).raw("</td><td class=\"if-fails\">")
                    .text(DependencyFailureWords.of(n)).raw("</td><td><a href=\"/jobs?id=").text(n.jobId())
                    .raw("\">").text(n.jobId()).raw("</a></td></tr>\n");
        }
        h.raw("</tbody></table><p class=\"hint\">Step 1 jobs are the roots; a job of step n waits for one of step n-1. If one"
                + " fails: what a job does when a job it depends on is dead-lettered, cancelled or skipped (skip: it is skipped too,"
                + " the default).</p>");
        if (!readOnly && s.nodes().stream().anyMatch(n -> n.state().isActive())) {
            h.raw(forms.form(WORKFLOWS + "/cancel", Map.of("id", id.toString()), "Cancel workflow", "workflow-cancel",
                    "Cancel workflow " + id + "? Its held and queued jobs never run, its running ones are interrupted."));
        }
        return true;
    }

    /** Applies the cancel at {@code path}, as {@code binomic batch cancel} or {@code binomic workflow cancel} does. */
    Done cancel(String path, Map<String, String> form) {
        boolean batch = path.startsWith(BATCHES);
        String noun = batch ? "batch" : "workflow";
        String text = form.getOrDefault("id", "");
        UUID id = CanonicalIds.parse(text).orElseThrow(() -> new IllegalArgumentException(CanonicalIds.refusal(text, noun)));
        String back = (batch ? BATCHES : WORKFLOWS) + "/" + id;
        JobHandle.CancelOutcome outcome = batch ? binomic.batch(id).cancel() : binomic.workflow(id).cancel();
        return new Done(back, noun + " " + id + ": " + outcome);
    }
}
