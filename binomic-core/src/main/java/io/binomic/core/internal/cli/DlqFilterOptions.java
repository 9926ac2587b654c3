package io.binomic.core.internal.cli;

import io.binomic.api.DeadLetterFilter;
import io.binomic.api.DeadLetterReason;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** The dead-letter filter options shared by {@code dlq list}, {@code replay} and {@code purge}. */
final class DlqFilterOptions {
    static final Option TASK = Option.value("task", "NAME", "only dead letters of this task");
    static final Option REASON = Option.value("reason", "REASON", "only this reason: "
            + String.join(", ", Arrays.stream(DeadLetterReason.values()).map(Enum::name).toList()));
    static final Option ERROR_CLASS = Option.value("error-class", "CLASS", "only this failure class (exact name)");
    static final List<Option> ALL = List.of(TASK, REASON, ERROR_CLASS);

    private DlqFilterOptions() { }

    static boolean any(Arguments args) { return ALL.stream().anyMatch(o -> args.has(o.name())); }

    static DeadLetterFilter filter(Arguments args) throws UsageException {
        DeadLetterFilter filter = DeadLetterFilter.all();
        if (args.has(TASK.name())) {
            filter = filter.withTask(args.value(TASK.name()).orElseThrow());
        }
        if (args.has(REASON.name())) {
            String reason = args.value(REASON.name()).orElseThrow();
            try {
                filter = filter.withReason(DeadLetterReason.valueOf(reason.toUpperCase(Locale.ROOT).replace('-', '_')));
            } catch (IllegalArgumentException e) {
                throw new UsageException("--reason must be one of " + Arrays.toString(DeadLetterReason.values())
                        + ", was '" + reason + "'");
            }
        }
        if (args.has(ERROR_CLASS.name())) {
            filter = filter.withErrorClass(args.value(ERROR_CLASS.name()).orElseThrow());
        }
        return filter;
    }
}
