package io.binomic.core.internal.cli;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code binomic} command: starts a master, shows queues and workers, and manages the
 * dead-letter queue. Results go to stdout, messages and progress to stderr.
 *
 * <p>Exit codes scripts can rely on: {@value #EXIT_OK} done, {@value #EXIT_FAILED} the operation
 * failed (broker unreachable, dead letter not found...), {@value #EXIT_USAGE} bad usage (the
 * message and the command's usage are printed).
 */
public final class BinomicCli {
    public static final int EXIT_OK = 0;
    public static final int EXIT_FAILED = 1;
    public static final int EXIT_USAGE = 2;

    /** Opens a started Binomic instance on a broker for the inspection commands; the caller closes it. */
    @FunctionalInterface
    interface Connector {
        Binomic connect(String brokerUrl, List<String> queues);
    }

    private final PrintStream out;
    private final PrintStream err;
    private final List<Command> commands;

    BinomicCli(PrintStream out, PrintStream err, Map<String, String> env, Connector connector) {
        this.out = out;
        this.err = err;
        this.commands = List.of(
                new MasterCommand(out, env),
                new QueuesCommand(out, env, connector),
                new WorkersCommand(out),
                new DlqListCommand(out, env, connector),
                new DlqChangeCommand(DlqChangeCommand.Action.REPLAY, out, err, env, connector),
                new DlqChangeCommand(DlqChangeCommand.Action.PURGE, out, err, env, connector));
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs a command line as {@code main} does, printing to {@code out} and {@code err}, and
     * returns its exit code instead of exiting: for tools and tests that embed the CLI.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        return new BinomicCli(out, err, System.getenv(), BinomicCli::connect).run(args);
    }

    /**
     * Connects with the application's tasks (for their queue names), without firing periodic tasks
     * and without creating any queue: inspecting a mistyped queue name must not create it.
     */
    static Binomic connect(String brokerUrl, List<String> queues) {
        BinomicConfig config = BinomicConfig.builder()
                .broker(BrokerConfig.builder().url(brokerUrl).build())
                .worker(WorkerConfig.builder().queues(queues).build())
                .schedulePeriodicTasks(false)
                .build();
        Binomic binomic = Binomic.builder().config(config).discoverTasks().prepareQueues(false).build();
        try {
            return binomic.start();
        } catch (RuntimeException e) {
            binomic.close();
            throw e;
        }
    }

    /** Runs the command line {@code args}; returns the exit code. */
    int run(String... args) {
        List<String> words = Arrays.asList(args);
        if (words.isEmpty()) {
            err.println("binomic: no command given");
            err.println();
            printOverview(err);
            return EXIT_USAGE;
        }
        if (words.getFirst().equals("--help") || words.getFirst().equals("-h") || words.getFirst().equals("help")) {
            printOverview(out);
            return EXIT_OK;
        }
        Optional<Command> command = find(words);
        if (command.isEmpty()) {
            return unknownCommand(words);
        }
        Command chosen = command.get();
        List<String> rest = words.subList(chosen.name().split(" ").length, words.size());
        if (rest.contains("--help") || rest.contains("-h")) {
            printUsage(chosen, out);
            return EXIT_OK;
        }
        try {
            return chosen.run(Arguments.parse(rest, chosen.options()));
        } catch (UsageException e) {
            err.println("binomic " + chosen.name() + ": " + e.getMessage());
            err.println();
            printUsage(chosen, err);
            return EXIT_USAGE;
        } catch (RuntimeException e) {
            // Broker down, bad state directory, provider missing...: the message says what and how to fix it.
            err.println("binomic " + chosen.name() + ": " + describe(e));
            return EXIT_FAILED;
        }
    }

    private static String describe(RuntimeException e) {
        return e.getMessage() == null ? e.getClass().getName() : e.getMessage();
    }

    private Optional<Command> find(List<String> words) {
        for (Command command : commands) {
            List<String> name = List.of(command.name().split(" "));
            if (words.size() >= name.size() && words.subList(0, name.size()).equals(name)) {
                return Optional.of(command);
            }
        }
        return Optional.empty();
    }

    private int unknownCommand(List<String> words) {
        String first = words.getFirst();
        List<Command> group = commands.stream().filter(c -> c.name().startsWith(first + " ")).toList();
        if (!group.isEmpty()) {
            // "binomic dlq" alone or with an unknown second word: list that group's commands.
            boolean help = words.size() > 1 && (words.get(1).equals("--help") || words.get(1).equals("-h"));
            PrintStream to = help ? out : err;
            if (!help) {
                err.println("binomic " + first + ": " + (words.size() > 1 ? "unknown command '" + words.get(1) + "'"
                        : "say which: " + String.join(", ", group.stream().map(c -> c.name().substring(first.length() + 1)).toList())));
                err.println();
            }
            to.println("Usage: binomic " + first + " <command> [options]");
            to.println();
            printCommandList(group, to);
            return help ? EXIT_OK : EXIT_USAGE;
        }
        err.println("binomic: unknown command '" + first + "'");
        err.println();
        printOverview(err);
        return EXIT_USAGE;
    }

    private void printOverview(PrintStream to) {
        to.println("Usage: binomic <command> [options]");
        to.println();
        to.println("Commands:");
        printCommandList(commands, to);
        to.println();
        to.println("Run 'binomic <command> --help' for a command's options.");
        to.println("Exit codes: 0 done, 1 the operation failed, 2 bad usage.");
    }

    private static void printCommandList(List<Command> list, PrintStream to) {
        int width = list.stream().mapToInt(c -> c.name().length()).max().orElse(0);
        for (Command command : list) {
            to.println("  " + command.name() + " ".repeat(width - command.name().length() + 3) + command.summary());
        }
    }

    static void printUsage(Command command, PrintStream to) {
        to.println("Usage: binomic " + command.name() + " [options]");
        to.println(command.summary() + ".");
        to.println();
        to.println("Options:");
        List<Option> all = new ArrayList<>(command.options());
        all.add(Option.flag("help", "show this help"));
        int width = all.stream().mapToInt(o -> o.synopsis().length()).max().orElse(0);
        for (Option option : all) {
            to.println("  " + option.synopsis() + " ".repeat(width - option.synopsis().length() + 3) + option.description()
                    + (option.repeatable() ? " (repeatable)" : ""));
        }
        if (!command.notes().isEmpty()) {
            to.println();
            to.println(command.notes().stripTrailing());
        }
    }
}
