package io.binomic.cli;

import io.binomic.core.internal.cli.BinomicCli;

/**
 * The {@code binomic} command from the class path: {@code java -jar binomic-cli.jar master
 * --broker redis://host:6379 --queues emails}, or any other command of the jlink image's
 * {@code bin/binomic} ({@code --help} lists them). The jar's manifest names the jars of
 * {@code lib/} beside it: Binomic, the Redis broker, Redisson and an SLF4J provider that routes
 * Redisson's logs to {@link System.Logger}. To give the master's workers your tasks, run it with
 * them on the class path: {@code java -cp binomic-cli.jar:tasks.jar io.binomic.cli.Main master ...}.
 */
public final class Main {
    private Main() { }

    /**
     * Runs one command and exits with its code: 0 done, 1 failed, 2 bad usage.
     *
     * @param args the command and its options, as for {@code bin/binomic}
     */
    public static void main(String[] args) {
        BinomicCli.main(args);
    }
}
