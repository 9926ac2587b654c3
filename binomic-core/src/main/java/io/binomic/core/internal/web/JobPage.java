package io.binomic.core.internal.web;

import io.binomic.api.JobNotFoundException;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.core.Binomic;
import io.binomic.core.internal.CanonicalIds;
import io.binomic.core.internal.MistakenIds;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

/** The dashboard's job page: a tracked job's status by id, its attempts, what it belongs to, and its cancel. */
final class JobPage {
    private final Binomic binomic;
    /** The queues a job is looked for on. */
    private final Supplier<List<String>> queues;
    /** The cancel form of a job that has not ended; null on a read-only dashboard. */
    private final Function<UUID, String> cancelForm;

    JobPage(Binomic binomic, Supplier<List<String>> queues, Function<UUID, String> cancelForm) {
        this.binomic = binomic;
        this.queues = queues;
        this.cancelForm = cancelForm;
    }

    /** {@code id} as a job id, or null when it is none (blank, or not a UUID). */
    static UUID jobId(String id) {
        if (id == null || id.isBlank()) {
            return null;
        }
        return CanonicalIds.parse(id).orElse(null);
    }

    /**
     * The job page for {@code id} (the search form alone without one); false when no status is kept
     * for the job, a 404 as an unknown batch's or workflow's page.
     */
    boolean render(Html h, String id) {
        h.raw("<form method=\"get\" action=\"/jobs\" class=\"search\"><label>Job id <input name=\"id\" id=\"job-id\" size=\"40\" value=\"")
                .text(id == null ? "" : id).raw("\"></label> <button type=\"submit\" id=\"job-search\">Show</button></form>");
        if (id == null || id.isBlank()) {
            h.raw("<p class=\"hint\">Tracked jobs (tasks with <code>keepStatusFor</code>, and jobs submitted by name) keep a status.</p>");
            return true;
        }
        UUID uuid = jobId(id);
        if (uuid == null) {
            h.raw("<p class=\"error\" id=\"bad-id\">").text(CanonicalIds.refusal(id, "job")).raw("</p>");
            return true;
        }
        JobStatus s;
        try {
            s = binomic.job(uuid).status();
        } catch (JobNotFoundException | IllegalStateException e) {
            h.raw("<p class=\"error\" id=\"job-missing\">").text("no status is kept for job " + uuid + ": " + e.getMessage()).raw("</p>");
            return false;
        }
        if (s.state() == JobState.UNKNOWN) {
            // Nothing to show or cancel: a table of blanks and a cancel button would suggest a job.
            List<String> looked = queues.get();
            String where = looked.size() == 1 ? "on queue " + looked.getFirst()
                    : "on any of the " + looked.size() + " queues looked in (" + String.join(", ", looked) + ")";
            h.raw("<p class=\"error\" id=\"job-missing\">").text("no status is kept for job " + uuid + " " + where + ": ");
            Optional<String> kind = MistakenIds.kindOf(binomic, uuid, MistakenIds.JOB);
            if (kind.isPresent()) {
                FlowPages.mistakenId(h, kind.get(), uuid);
            } else {
                h.text("a wrong id or queue, a task that is not tracked (its dead letters show the job id), or a status past its retention");
            }
            h.raw("</p>");
            return false;
        }
        h.raw("<table class=\"fields\" id=\"job\"><tbody>");
        h.row("id", s.id()).row("queue", s.queue()).row("task", s.task());
        h.raw("<tr><td>state</td><td id=\"job-state\">").text(s.state()).raw("</td></tr>");
        // What the job belongs to, on the pages FlowPages serves (a UUID, escaped all the same).
        s.batchId().ifPresent(batch -> h.raw("<tr><td>batch</td><td id=\"job-batch\"><a href=\"/batches/").text(batch)
                .raw("\">").text(batch).raw("</a></td></tr>"));
        s.workflowId().ifPresent(workflow -> h.raw("<tr><td>workflow</td><td id=\"job-workflow\"><a href=\"/workflows/")
                .text(workflow).raw("\">").text(workflow).raw("</a></td></tr>"));
        h.row("attempt", s.attempt()).row("due", s.due().map(DashboardPages.TIME::format).orElse("")).row("worker", s.worker().orElse(""))
                .row("started", s.startedAt().map(DashboardPages.TIME::format).orElse("")).row("ended", s.endedAt().map(DashboardPages.TIME::format).orElse(""))
                .row("duration", s.duration().map(DashboardPages::millis).orElse(""))
                .row("progress", s.progress().isPresent() ? s.progress().getAsInt() + "% " + s.progressNote().orElse("") : "")
                .row("result", s.result().orElse("")).row("error", s.error().orElse(""))
                .row("dead letter", s.deadLetterReason().map(Object::toString).orElse(""))
                .row("cancel requested", s.cancelRequested() ? "yes" : "");
        s.traceContext().ifPresent(trace -> {
            h.raw("<tr><td>trace id</td><td id=\"job-trace\">").text(trace.traceId()).raw("</td></tr>");
            h.row("traceparent", trace.traceparent());
            if (!trace.tracestate().isEmpty()) {
                h.row("tracestate", trace.tracestate());
            }
        });
        h.raw("</tbody></table>");
        if (!s.attempts().isEmpty()) {
            h.raw("<h2>Attempts</h2><table id=\"attempts\">").head("attempt", "worker", "started", "ended", "outcome", "error").raw("<tbody>");
            for (JobStatus.Attempt a : s.attempts()) {
                h.row(a.attempt(), a.worker(), a.startedAt() == null ? "" : DashboardPages.TIME.format(a.startedAt()),
                        a.endedAt() == null ? "" : DashboardPages.TIME.format(a.endedAt()), a.outcome(), a.error());
            }
            h.raw("</tbody></table>");
        }
        if (cancelForm != null && !s.state().isFinal()) {
            h.raw(cancelForm.apply(s.id()));
        }
        return true;
    }
}
