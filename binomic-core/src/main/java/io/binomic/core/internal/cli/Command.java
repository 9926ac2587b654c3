package io.binomic.core.internal.cli;

import io.binomic.core.Binomic;
import io.binomic.core.internal.process.Settings;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** One CLI command: its name as typed ({@code queues}, {@code dlq replay}), its help and its action. */
abstract class Command {
    /**
     * What every command works with.
     *
     * @param env the environment, with the configuration file's {@code broker.url} where the real one has none
     * @param connector opens a broker for the inspection commands
     * @param settings the settings the CLI loaded for this run
     */
    record Context(PrintStream out, PrintStream err, Map<String, String> env, BinomicCli.Connector connector,
                   Supplier<Settings> settings) {

        /** A started Binomic on the broker of {@code --broker} (else the environment's), for {@code queues}. */
        Binomic connect(Arguments args, List<String> queues) throws UsageException {
            return connector.connect(BrokerOptions.url(args, env), queues);
        }
    }

    /** One of the commands of a group that share their options and code, such as {@code queue pause} and {@code queue resume}. */
    record Verb(String word, String summary, String notes) { }

    /** What a command does on a started Binomic; throws what the caller turns into an exit code. */
    @FunctionalInterface
    interface OnBroker {
        void run(Binomic binomic) throws UsageException;
    }

    /** The words that select it, such as {@code dlq replay}. */
    final String name;
    /** One line for the command list and the top of its help. */
    final String summary;
    /** The options it accepts ({@code --help} is added by the CLI). */
    final List<Option> options;
    /** More help after the options: examples, notes; may be empty. */
    final String notes;
    final PrintStream out;
    final PrintStream err;
    final Context cx;

    Command(Context cx, String name, String summary, List<Option> options, String notes) {
        this.cx = cx;
        this.out = cx.out();
        this.err = cx.err();
        this.name = name;
        this.summary = summary;
        this.options = options;
        this.notes = notes;
    }

    /**
     * Turns positional words at the front of {@code rest} (what follows the command's name) into
     * options, such as {@code queue pause NAME} into {@code --queue NAME}. None by default.
     */
    List<String> takeOperands(List<String> rest) { return rest; }

    /** Which queues a command looks at: the ones named with {@code --queues}, else those of the discovered tasks. */
    static List<String> queues(Arguments args, Binomic binomic) throws UsageException {
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

    /**
     * Runs {@code action} on a started Binomic of {@code queues} and returns {@link BinomicCli#EXIT_OK}; a value the
     * action's calls refuse ({@link IllegalArgumentException}) is bad usage, not a failed operation.
     */
    int onBroker(Arguments args, List<String> queues, OnBroker action) throws UsageException {
        try (Binomic binomic = cx.connect(args, queues)) {
            try {
                action.run(binomic);
            } catch (IllegalArgumentException e) {
                throw new UsageException(e.getMessage());
            }
        }
        return BinomicCli.EXIT_OK;
    }

    /**
     * Runs the command.
     *
     * @return the exit code: {@link BinomicCli#EXIT_OK} or {@link BinomicCli#EXIT_FAILED}
     * @throws UsageException when the arguments are wrong in a way parsing could not tell
     */
    abstract int run(Arguments args) throws UsageException;
}
