package io.binomic.core.internal.cli;

import java.util.List;

/** One CLI command: its name as typed ({@code queues}, {@code dlq replay}), its help and its action. */
interface Command {

    /** The words that select it, such as {@code dlq replay}. */
    String name();

    /** One line for the command list and the top of its help. */
    String summary();

    /** The options it accepts ({@code --help} is added by the CLI). */
    List<Option> options();

    /** More help after the options: examples, notes. Empty by default. */
    default String notes() {
        return "";
    }

    /**
     * Turns positional words at the front of {@code rest} (what follows the command's name) into
     * options, such as {@code queue pause NAME} into {@code --queue NAME}. None by default.
     */
    default List<String> takeOperands(List<String> rest) {
        return rest;
    }

    /**
     * Runs the command.
     *
     * @return the exit code: {@link BinomicCli#EXIT_OK} or {@link BinomicCli#EXIT_FAILED}
     * @throws UsageException when the arguments are wrong in a way parsing could not tell
     */
    int run(Arguments args) throws UsageException;
}
