package io.binomic.core.internal.cli;

import io.binomic.api.WorkflowStatus;
import io.binomic.core.Binomic;
import io.binomic.core.WorkflowHandle;
import io.binomic.core.internal.CanonicalIds;
import io.binomic.core.internal.DependencyFailureWords;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** {@code binomic workflow show} and {@code binomic workflow cancel}: a workflow by id, from any shell. */
final class WorkflowCommand extends Command {
    static final Option ID = Option.value("id", "UUID", "the workflow id (WorkflowHandle.id(), TaskContext.workflowId())"
            + "; or give it as the first word: workflow show ID");

    static final Verb SHOW = new Verb("show", "Show a workflow's state and each job's state and dependencies", """
            A workflow's status is kept while a job of it is held or enqueued and for its retention
            once none is (one day unless Workflow.Builder.retention says otherwise). One line per
            job: name, state, queue, job id, the jobs it depends on, and what it does if one of them
            fails (is dead-lettered, cancelled or skipped): skip (the default: it is skipped, and so
            are the jobs that depend on it), run anyway, or ignore the ones named and skip on the
            failure of another. Exit code 1 when the workflow is unknown.
            """);
    static final Verb CANCEL = new Verb("cancel", "Cancel a workflow: its held and queued jobs never run, its running ones are interrupted", """
            Each held job is cancelled at once; each enqueued one is cancelled as 'binomic job cancel'
            does. Prints, as 'binomic job cancel' does, CANCELLED (nothing of it will run),
            CANCEL_REQUESTED (a job of it was running: its worker interrupts it), ALREADY_ENDED (no
            job of it was held or enqueued) or NOT_FOUND (both change nothing; exit code 1).
            """);

    private final Verb verb;

    WorkflowCommand(Context cx, Verb verb) {
        super(cx, "workflow " + verb.word(), verb.summary(), List.of(BROKER, ID), verb.notes());
        this.verb = verb;
    }

    /** {@code workflow show|cancel ID}: the first word, when it is not an option, is the id. */
    @Override
    List<String> takeOperands(List<String> rest) { return firstWordAs("id", rest); }

    @Override
    int run(Arguments args) throws UsageException {
        String text = args.value("id").orElseThrow(() -> new UsageException("--id is required: the workflow id, such as 0193a3c4-..."));
        UUID id = CanonicalIds.parse(text).orElseThrow(() -> new UsageException("--id: " + CanonicalIds.refusal(text, "workflow")));
        try (Binomic binomic = cx.connect(args, List.of())) {
            WorkflowHandle workflow = binomic.workflow(id);
            if (verb == CANCEL) {
                return FlowCancelReport.print(out, err, binomic, "workflow", id, brokerRead(binomic), workflow.cancel());
            }
            Optional<WorkflowStatus> status = workflow.status();
            if (status.isEmpty()) {
                err.println(FlowCancelReport.notFound(binomic, "workflow", "show", id, brokerRead(binomic)));
                return BinomicCli.EXIT_FAILED;
            }
            WorkflowStatus s = status.get();
            out.println("workflow   " + id);
            out.println("state      " + s.state() + (s.cancelRequested() && s.state() != WorkflowStatus.State.CANCELLED ? " (cancel requested)" : ""));
            out.println("created    " + s.createdAt());
            out.println("jobs       " + s.nodes().size());
            Table table = new Table("NAME", "STATE", "QUEUE", "JOB", "DEPENDS ON", "IF ONE FAILS");
            for (WorkflowStatus.Node n : s.nodes()) {
                table.row(n.name(), n.state().name(), n.queue(), n.jobId().toString(),
                        n.dependsOn().isEmpty() ? "-" : String.join(", ", n.dependsOn()), DependencyFailureWords.of(n));
            }
            table.print(out);
            return BinomicCli.EXIT_OK;
        } catch (IllegalArgumentException | IllegalStateException e) {
            // A broker without the capability is not a usage error: it fails (exit 1), naming the broker.
            throw new UsageException(e.getMessage());
        }
    }
}
