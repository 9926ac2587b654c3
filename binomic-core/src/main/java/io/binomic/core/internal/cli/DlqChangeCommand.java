package io.binomic.core.internal.cli;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.core.Binomic;
import io.binomic.core.DeadLetters;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.LongConsumer;
import java.util.stream.Stream;

/**
 * {@code binomic dlq replay} and {@code binomic dlq purge}: the same selection (everything, ids, or
 * a filter), a different action. A selection is required, so that a mistyped command never
 * touches a whole dead-letter queue.
 */
final class DlqChangeCommand extends Command {
    /** Runs longer than one batch of the dead-letter store get a progress bar. */
    static final long PROGRESS_THRESHOLD = 500;

    static final Verb REPLAY = new Verb("replay", "Put dead letters back on their queue (attempt reset, replayedFrom header set)", "");
    static final Verb PURGE = new Verb("purge", "Delete dead letters for good", "");

    private final Verb verb;
    /** What the verb did, as the output says it: replayed, purged. */
    private final String done;

    DlqChangeCommand(Context cx, Verb verb) {
        super(cx, "dlq " + verb.word(), verb.summary(), optionList(), "Select with --all, with --id, or with at least one filter"
                + " (--task, --reason, --error-class). Exit code 1 when an --id or a filter matched none (with --all, an empty"
                + " dead-letter queue exits 0).\nExample: binomic dlq " + verb.word() + " --queues emails --error-class java.net.ConnectException\n");
        this.verb = verb;
        this.done = verb == REPLAY ? "replayed" : "purged";
    }

    private static List<Option> optionList() {
        Stream<Option> own = Stream.of(BROKER, QUEUES, Option.flag("all", "every dead letter of the queues"),
                Option.repeatable("id", "ID", "this dead letter (needs exactly one queue in --queues)"));
        return Stream.of(own, DlqListCommand.FILTERS.stream(), Stream.of(ANY_QUEUE, DlqListCommand.ANY_FILTER_TASK)).flatMap(s -> s).toList();
    }

    @Override
    int run(Arguments args) throws UsageException {
        boolean all = args.has("all");
        List<String> ids = args.values("id");
        boolean filtered = DlqListCommand.FILTERS.stream().anyMatch(o -> args.has(o.name()));
        int selections = (all ? 1 : 0) + (ids.isEmpty() ? 0 : 1) + (filtered ? 1 : 0);
        if (selections == 0) {
            throw new UsageException("say what to " + verb.word() + ": --all, --id ID, or a filter (--task, --reason, --error-class)");
        }
        if (selections > 1) {
            throw new UsageException("--all, --id and the filters exclude each other: choose one way to select");
        }
        if (!ids.isEmpty() && args.list("queues").size() != 1) {
            throw new UsageException("--id needs exactly one queue: add --queues QUEUE");
        }
        DeadLetterFilter filter = DlqListCommand.filter(args);
        try (Binomic binomic = cx.connect(args, args.list("queues"))) {
            // Every name checked before any is changed: a typo in the second must not leave the first half done.
            requireKnownNamedQueues(args, binomic);
            DeadLetters deadLetters = binomic.deadLetters();
            if (!ids.isEmpty()) {
                return byId(deadLetters, args.list("queues").getFirst(), ids);
            }
            List<String> queues = queues(args, binomic);
            requireKnownFilterTask(args, binomic, queues);
            long total = 0;
            boolean skippedUndecodable = false;
            for (String queue : queues) {
                if (verb == REPLAY) {
                    DeadLetters.ReplayOutcome outcome = withProgress(deadLetters, queue, filter,
                            progress -> deadLetters.replayMatching(queue, filter, progress));
                    out.println(done + " " + outcome.replayed() + " dead letter(s) of queue " + queue);
                    reportSkipped(queue, outcome);
                    skippedUndecodable |= outcome.undecodable() > 0;
                    total += outcome.replayed() + outcome.skipped();
                } else {
                    long n = withProgress(deadLetters, queue, filter, progress -> deadLetters.purge(queue, filter, progress));
                    out.println(done + " " + n + " dead letter(s) of queue " + queue);
                    total += n;
                }
            }
            String where = (queues.size() == 1 ? "queue " : "queues ") + String.join(", ", queues) + " on " + brokerRead(binomic);
            if (total == 0 && all) {
                // An empty dead-letter queue is what a nightly purge or replay of everything wants: done, not failed.
                err.println("binomic " + name + ": no dead letters in " + where + "; nothing to do");
            } else if (total == 0) {
                // Exit 1, as every write that changes nothing: a script must not read "replayed 0" of a filter as done.
                err.println("binomic " + name + ": nothing matched in " + where + "; nothing changed");
                return BinomicCli.EXIT_FAILED;
            }
            return skippedUndecodable ? BinomicCli.EXIT_FAILED : BinomicCli.EXIT_OK;
        }
    }

    private void reportSkipped(String queue, DeadLetters.ReplayOutcome outcome) {
        if (outcome.undecodable() > 0) {
            err.println("binomic " + name + ": skipped " + outcome.undecodable() + " dead letter(s) of queue " + queue
                    + " that cannot be replayed: their message could not be decoded, only its raw fields are kept;"
                    + " see them with 'binomic dlq list --details --queues " + queue + "', delete them with 'binomic dlq purge --id ID'");
        }
        if (outcome.gone() > 0) {
            err.println("binomic " + name + ": skipped " + outcome.gone() + " dead letter(s) of queue " + queue
                    + " that were replayed or purged by someone else meanwhile");
        }
    }

    private int byId(DeadLetters deadLetters, String queue, List<String> ids) throws UsageException {
        List<Optional<DeadLetter>> letters = new ArrayList<>();
        for (String id : ids) {
            try {
                letters.add(deadLetters.find(queue, id));
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
        }
        int failed = 0;
        for (int i = 0; i < ids.size(); i++) {
            String id = ids.get(i);
            Optional<DeadLetter> letter = letters.get(i);
            if (letter.isEmpty()) {
                err.println("binomic " + name + ": no dead letter " + id + " in queue " + queue);
                failed++;
            } else if (verb == REPLAY && letter.get().message().isEmpty()) {
                err.println("binomic " + name + ": dead letter " + id + " of queue " + queue + " cannot be replayed:"
                        + " its message could not be decoded (" + letter.get().failure().reason() + "), only its raw fields"
                        + " are kept; see it with 'binomic dlq list --details', delete it with 'binomic dlq purge --id " + id + "'");
                failed++;
            } else if (verb == REPLAY ? deadLetters.replayOne(queue, id) : deadLetters.purgeOne(queue, id)) {
                out.println(done + " " + id);
            } else {
                err.println("binomic " + name + ": no dead letter " + id + " in queue " + queue
                        + " (replayed or purged by someone else meanwhile)");
                failed++;
            }
        }
        return failed == 0 ? BinomicCli.EXIT_OK : BinomicCli.EXIT_FAILED;
    }

    private <T> T withProgress(DeadLetters deadLetters, String queue, DeadLetterFilter filter, Function<LongConsumer, T> work) {
        long expected = deadLetters.count(queue, filter);
        if (expected < PROGRESS_THRESHOLD) {
            return work.apply(done -> { });
        }
        ProgressBar bar = new ProgressBar(err, verb.word() + " " + queue, expected, System::currentTimeMillis);
        bar.accept(0);
        try {
            return work.apply(bar);
        } finally {
            bar.finish();
        }
    }
}
