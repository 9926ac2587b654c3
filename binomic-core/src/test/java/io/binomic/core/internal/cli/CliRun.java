package io.binomic.core.internal.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** One in-process run of the CLI with its exit code and what it printed. */
record CliRun(int exit, String out, String err) {

    static CliRun of(Map<String, String> env, BinomicCli.Connector connector, String... args) {
        return of(env, Map.of(), connector, args);
    }

    /** A run in a JVM with these system properties. */
    static CliRun of(Map<String, String> env, Map<String, String> properties, BinomicCli.Connector connector, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit;
        try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
             PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
            exit = new BinomicCli(o, e, env, properties, connector).run(args);
        }
        return new CliRun(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
