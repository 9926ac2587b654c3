package io.binomic.core.internal.cli;

import io.binomic.core.Binomic;
import java.util.List;

/** Which queues a command looks at: the ones named with {@code --queues}, else those of the discovered tasks. */
final class Queues {
    private Queues() { }

    static List<String> resolve(Arguments args, Binomic binomic) throws UsageException {
        List<String> named = args.list("queues");
        if (!named.isEmpty()) {
            return named;
        }
        List<String> known = binomic.deadLetters().queues();
        if (known.isEmpty()) {
            throw new UsageException("no queues to look at: name them with --queues, or put the application's modules"
                    + " (its TaskProvider) on the module path");
        }
        return known;
    }
}
