package io.binomic.core.internal.cli;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterGroup;
import io.binomic.api.DeadLetterReason;
import io.binomic.core.Binomic;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/** {@code binomic dlq list}: dead letters counted by task, reason and failure class, or listed one by one. */
final class DlqListCommand extends Command {
    private static final int MESSAGE_WIDTH = 60;
    /** The filter options, which {@code dlq replay} and {@code purge} share. */
    static final List<Option> FILTERS = List.of(Option.value("task", "NAME", "only dead letters of this task"),
            Option.value("reason", "REASON", "only this reason: "
                    + String.join(", ", Arrays.stream(DeadLetterReason.values()).map(Enum::name).toList())),
            Option.value("error-class", "CLASS", "only this failure class (exact name)"));
    /** {@code --any-task} of the dead-letter commands, whose known tasks include those of the queues' dead letters. */
    static final Option ANY_FILTER_TASK = Option.flag("any-task", "use the --task name as typed; without it, a name that is no task"
            + " of the queues on this CLI's module path, of none of their dead letters and not paused there is refused as a typo");

    DlqListCommand(Context cx) {
        super(cx, "dlq list", "Show dead letters grouped by task, reason and failure class (--details: one per line)", optionList(), "");
    }

    private static List<Option> optionList() {
        List<Option> details = List.of(Option.flag("details", "list the dead letters themselves instead of groups"),
                Option.value("limit", "N", "with --details, at most N per queue. Defaults to 100"),
                Option.flag("wide", "with --details, whole error messages (on one line each) instead of the first 60 characters"));
        return Stream.of(List.of(BROKER, QUEUES), FILTERS, details, List.of(ANY_QUEUE, ANY_FILTER_TASK)).flatMap(List::stream).toList();
    }

    @Override
    int run(Arguments args) throws UsageException {
        DeadLetterFilter filter = filter(args);
        boolean details = args.has("details");
        int limit = args.intValue("limit", 100, 1);
        for (String option : List.of("limit", "wide")) {
            if (args.has(option) && !details) {
                throw new UsageException("--" + option + " applies to --details only");
            }
        }
        boolean wide = args.has("wide");
        try (Binomic binomic = cx.connect(args, args.list("queues"))) {
            requireKnownNamedQueues(args, binomic);
            List<String> queues = queues(args, binomic);
            requireKnownFilterTask(args, binomic, queues);
            return details ? printDetails(binomic, queues, filter, limit, wide) : printGroups(binomic, queues, filter);
        }
    }

    /** The filter of the options given; {@code DeadLetterFilter.all()} without any. */
    static DeadLetterFilter filter(Arguments args) throws UsageException {
        DeadLetterFilter filter = DeadLetterFilter.all();
        if (args.has("task")) {
            filter = filter.withTask(args.value("task").orElseThrow());
        }
        if (args.has("reason")) {
            String reason = args.value("reason").orElseThrow();
            try {
                filter = filter.withReason(DeadLetterReason.valueOf(reason.toUpperCase(Locale.ROOT).replace('-', '_')));
            } catch (IllegalArgumentException e) {
                throw new UsageException("--reason must be one of " + Arrays.toString(DeadLetterReason.values())
                        + ", was '" + reason + "'");
            }
        }
        if (args.has("error-class")) {
            filter = filter.withErrorClass(args.value("error-class").orElseThrow());
        }
        return filter;
    }

    private int printGroups(Binomic binomic, List<String> queues, DeadLetterFilter filter) {
        Table table = new Table("QUEUE", "TASK", "REASON", "ERROR CLASS", "COUNT");
        long total = 0;
        for (String queue : queues) {
            for (DeadLetterGroup g : binomic.deadLetters().groups(queue)) {
                if (matches(filter, g)) {
                    table.row(queue, g.task(), g.reason(), g.errorClass(), g.count());
                    total += g.count();
                }
            }
        }
        table.print(out);
        out.println(total + " dead letter(s)");
        warnIfNone(binomic, queues, total);
        return BinomicCli.EXIT_OK;
    }

    private static boolean matches(DeadLetterFilter filter, DeadLetterGroup group) {
        return filter.task().map(group.task()::equals).orElse(true)
                && filter.reason().map(r -> r == group.reason()).orElse(true)
                && filter.errorClass().map(group.errorClass()::equals).orElse(true);
    }

    private int printDetails(Binomic binomic, List<String> queues, DeadLetterFilter filter, int limit, boolean wide) {
        Table table = new Table("ID", "QUEUE", "TASK", "REASON", "ERROR CLASS", "ATTEMPTS", "FAILED AT", "MESSAGE");
        int shown = 0;
        for (String queue : queues) {
            for (DeadLetter letter : binomic.deadLetters().list(queue, filter, limit)) {
                DeadLetter.Failure f = letter.failure();
                table.row(letter.id(), queue, letter.task(), f.reason(), f.errorClass(), f.attempts(), f.failedAt(),
                        oneLine(f.errorMessage(), wide));
                shown++;
            }
        }
        table.print(out);
        out.println(shown + " dead letter(s) shown");
        warnIfNone(binomic, queues, shown);
        return BinomicCli.EXIT_OK;
    }

    /** Names the broker read when it held no dead letter of the queues: a wrong broker looks like an empty dead-letter queue. */
    private void warnIfNone(Binomic binomic, List<String> queues, long found) {
        if (found == 0) {
            err.println("binomic " + name + ": no dead letters of queue(s) " + String.join(", ", queues) + " on " + brokerRead(binomic));
        }
    }

    private static String oneLine(String message, boolean wide) {
        String line = message.replaceAll("\\s+", " ").strip();
        return wide || line.length() <= MESSAGE_WIDTH ? line : line.substring(0, MESSAGE_WIDTH - 3) + "...";
    }
}
