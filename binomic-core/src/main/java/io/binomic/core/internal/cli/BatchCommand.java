package io.binomic.core.internal.cli;

import io.binomic.api.BatchStatus;
import io.binomic.core.BatchHandle;
import io.binomic.core.Binomic;
import io.binomic.core.internal.CanonicalIds;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/** {@code binomic batch show} and {@code binomic batch cancel}: a batch by id, from any shell. */
final class BatchCommand extends Command {
    static final Option ID = Option.value("id", "UUID", "the batch id (BatchHandle.id(), TaskContext.batchId())"
            + "; or give it as the first word: batch show ID");

    static final Verb SHOW = new Verb("show", "Show a batch's counts, state and the callbacks enqueued", """
            A batch's status is kept while it runs and for its retention once it completed
            (one day unless BatchBuilder.retention says otherwise). Exit code 1 when the batch is unknown.
            """);
    static final Verb CANCEL = new Verb("cancel", "Cancel a batch: its queued jobs never run, its running ones are interrupted", """
            The batch is closed and each job that has not ended is cancelled as 'binomic job cancel'
            does; once they ended the batch completes (its onComplete callback runs, not onSuccess
            unless every job still succeeded). Prints, as 'binomic job cancel' and 'binomic workflow
            cancel' do, CANCELLED (nothing more of it will run), CANCEL_REQUESTED (a job of it was
            running: its worker interrupts it), ALREADY_ENDED (every job of it had ended, or each was
            cancelled already) or NOT_FOUND (both change nothing; exit code 1).
            """);

    private final Verb verb;

    BatchCommand(Context cx, Verb verb) {
        super(cx, "batch " + verb.word(), verb.summary(), List.of(BROKER, ID), verb.notes());
        this.verb = verb;
    }

    /** {@code batch show|cancel ID}: the first word, when it is not an option, is the id. */
    @Override
    List<String> takeOperands(List<String> rest) { return firstWordAs("id", rest); }

    @Override
    int run(Arguments args) throws UsageException {
        String text = args.value("id").orElseThrow(() -> new UsageException("--id is required: the batch id, such as 0193a3c4-..."));
        UUID id = CanonicalIds.parse(text).orElseThrow(() -> new UsageException("--id: " + CanonicalIds.refusal(text, "batch")));
        try (Binomic binomic = cx.connect(args, List.of())) {
            BatchHandle batch = binomic.batch(id);
            if (verb == CANCEL) {
                return FlowCancelReport.print(out, err, binomic, "batch", id, brokerRead(binomic), batch.cancel());
            }
            Optional<BatchStatus> status = batch.status();
            if (status.isEmpty()) {
                err.println(FlowCancelReport.notFound(binomic, "batch", "show", id, brokerRead(binomic)));
                return BinomicCli.EXIT_FAILED;
            }
            BatchStatus s = status.get();
            out.println("batch      " + id);
            out.println("state      " + s.state() + (s.cancelRequested() && s.state() != BatchStatus.State.CANCELLED ? " (cancel requested)" : ""));
            out.println("created    " + s.createdAt());
            out.println("jobs       " + s.total());
            out.println("pending    " + s.pending());
            out.println("succeeded  " + s.succeeded());
            out.println("dead       " + s.deadLettered());
            out.println("cancelled  " + s.cancelled());
            out.println("callbacks  " + (s.fired().isEmpty() ? "none enqueued" : s.fired().stream().sorted().map(Enum::name)
                    .reduce((a, b) -> a + ", " + b).orElse("")));
            s.failedJobs().stream().limit(20).forEach(job -> out.println("failed     " + job));
            if (s.failedJobs().size() > 20) {
                out.println("failed     ... and " + (s.failedJobs().size() - 20) + " more");
            }
            return BinomicCli.EXIT_OK;
        } catch (IllegalArgumentException | IllegalStateException e) {
            // A broker without the capability is not a usage error: it fails (exit 1), naming the broker.
            throw new UsageException(e.getMessage());
        }
    }
}
