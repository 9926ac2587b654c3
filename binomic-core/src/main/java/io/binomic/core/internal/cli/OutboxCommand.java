package io.binomic.core.internal.cli;

import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;

/**
 * {@code binomic outbox}: the rows of a transactional outbox waiting for the relay, and the oldest
 * age. The outbox lives in the optional module binomic-jdbc, which the core does not depend on:
 * the command finds it on the path at run time, or says how to add it.
 */
final class OutboxCommand extends Command {
    private static final String TOOL = "io.binomic.jdbc.OutboxTool";

    OutboxCommand(Context cx) {
        super(cx, "outbox", "Show the transactional outbox's rows waiting for the relay and the oldest age (needs binomic-jdbc)",
                List.of(Option.value("jdbc", "URL", "the application database, such as jdbc:postgresql://db:5432/app"),
                        Option.value("user", "NAME", "the database user"),
                        Option.value("password-env", "VAR", "the environment variable that holds the database password"),
                        Option.value("table", "NAME", "the outbox table. Default binomic_outbox")), """
                Prints one line (rows waiting, age of the oldest) and the same as Prometheus metrics.
                Needs binomic-jdbc and the database's JDBC driver on the class or module path: see
                module-info-docs/outbox.md. Reads the table only; no broker is needed.
                """);
    }

    @Override
    int run(Arguments args) throws UsageException {
        String jdbc = args.value("jdbc").orElseThrow(() -> new UsageException("binomic outbox needs --jdbc URL (the application"
                + " database that holds the outbox table, such as jdbc:postgresql://db:5432/app)"));
        String passwordEnv = args.value("password-env").orElse(null);
        if (passwordEnv != null && cx.env().get(passwordEnv) == null) {
            throw new UsageException("binomic outbox --password-env " + passwordEnv + ": the environment variable " + passwordEnv
                    + " is not set; export it with the database password, or leave --password-env out");
        }
        Method status;
        try {
            status = Class.forName(TOOL).getMethod("status", String.class, String.class, String.class, String.class,
                    PrintStream.class, PrintStream.class);
        } catch (ClassNotFoundException | NoSuchMethodException e) {
            throw new IllegalStateException("binomic outbox needs the binomic-jdbc module, which is not on this command's path: run"
                    + " the binomic command from a class path that has binomic-jdbc's jar and your database's JDBC driver (java -jar"
                    + " ignores -cp): java -cp 'binomic-cli.jar:binomic-jdbc.jar:postgresql.jar' io.binomic.cli.Main outbox ..., or"
                    + " java -cp ... " + TOOL + " status (module-info-docs/outbox.md)");
        }
        try {
            return (Integer) status.invoke(null, jdbc, args.value("user").orElse(null),
                    passwordEnv == null ? null : cx.env().get(passwordEnv), args.value("table").orElse("binomic_outbox"), out, err);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(TOOL + ".status is not accessible: use the binomic-jdbc of this Binomic version", e);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
    }
}
