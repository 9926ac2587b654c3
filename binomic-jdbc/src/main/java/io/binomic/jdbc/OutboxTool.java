package io.binomic.jdbc;

import io.binomic.api.BinomicConfig;
import io.binomic.core.Binomic;
import io.binomic.jdbc.internal.OutboxRows;
import io.binomic.jdbc.internal.UrlDataSource;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import javax.sql.DataSource;

/**
 * The outbox's command line: {@code status} prints the rows waiting and the oldest age (and the
 * same as Prometheus metrics); {@code relay} runs an {@link OutboxRelay} on its own until the process
 * is stopped. Run it with the JDBC driver on the path:
 *
 * <pre>
 * java -cp 'binomic-jdbc.jar:binomic-core.jar:binomic-api.jar:postgresql.jar' io.binomic.jdbc.OutboxTool status \
 *      --jdbc jdbc:postgresql://db/app --user app --password-env PGPASSWORD
 * java -cp '...:binomic-redis.jar and its dependencies' io.binomic.jdbc.OutboxTool relay \
 *      --jdbc jdbc:postgresql://db/app --user app --password-env PGPASSWORD --broker redis://redis:6379
 * </pre>
 */
public final class OutboxTool {
    private static final String USAGE = """
            usage: OutboxTool status --jdbc URL [--user U] [--password-env VAR] [--table T]
                   OutboxTool relay  --jdbc URL [--user U] [--password-env VAR] [--table T] --broker URL [--batch N] [--poll-ms MS] [--no-listen]""";

    private OutboxTool() { }

    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command; returns the exit status (0 done, 2 a usage error, 1 a failure). */
    static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        if (args.length == 0 || !List.of("status", "relay").contains(args[0])) {
            err.println(USAGE);
            return 2;
        }
        Map<String, String> options = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String name = args[i];
            if (name.equals("--no-listen")) {
                options.put(name, "true");
            } else if (name.startsWith("--") && i + 1 < args.length) {
                options.put(name, args[++i]);
            } else {
                err.println("unknown or incomplete option '" + name + "'\n" + USAGE);
                return 2;
            }
        }
        if (!options.containsKey("--jdbc")) {
            err.println("--jdbc URL is required (the application database, e.g. jdbc:postgresql://host/db)\n" + USAGE);
            return 2;
        }
        String passwordEnv = options.get("--password-env");
        DataSource dataSource = new UrlDataSource(options.get("--jdbc"), options.get("--user"),
                passwordEnv == null ? null : System.getenv(passwordEnv));
        String table = options.getOrDefault("--table", Outbox.DEFAULT_TABLE);
        if (args[0].equals("status")) {
            return status(dataSource, new OutboxRows(table), out, err);
        }
        if (!options.containsKey("--broker")) {
            err.println("relay needs --broker URL (where the jobs go, e.g. redis://host:6379)\n" + USAGE);
            return 2;
        }
        BinomicConfig config = BinomicConfig.builder().brokerUrl(options.get("--broker")).build();
        try (Binomic binomic = Binomic.builder().config(config).build().start();
             OutboxRelay relay = OutboxRelay.builder(binomic, dataSource).table(table)
                     .batchSize(Integer.parseInt(options.getOrDefault("--batch", "500")))
                     .pollInterval(Duration.ofMillis(Long.parseLong(options.getOrDefault("--poll-ms", "1000"))))
                     .listen(!options.containsKey("--no-listen")).build().start()) {
            out.println("OUTBOX RELAY READY " + table + (relay.listening() ? " (LISTEN)" : ""));
            out.flush();
            new CountDownLatch(1).await(); // until the process is stopped
        }
        return 0;
    }

    /**
     * {@code status}: prints the rows waiting in {@code table} and the oldest age, and the same as Prometheus metrics.
     * Called by {@code binomic outbox} when this module is on its path. Returns 0, or 1 when the table cannot be read.
     *
     * @param user the database user; null to connect without one (or with the URL's)
     */
    public static int status(String jdbcUrl, String user, String password, String table, PrintStream out, PrintStream err) {
        return status(new UrlDataSource(jdbcUrl, user, password), new OutboxRows(table), out, err);
    }

    private static int status(DataSource dataSource, OutboxRows rows, PrintStream out, PrintStream err) {
        try (Connection c = dataSource.getConnection()) {
            OutboxRows.Waiting w = rows.waiting(c);
            double age = w.oldest() == null ? 0 : Math.max(0, Duration.between(w.oldest(), Instant.now()).toMillis() / 1000.0);
            out.printf(Locale.ROOT, "%s: %d waiting, oldest %.1f s%n", rows.table(), w.rows(), age);
            out.printf(Locale.ROOT, "binomic_outbox_waiting{table=\"%s\"} %d%n", rows.table(), w.rows());
            out.printf(Locale.ROOT, "binomic_outbox_oldest_age_seconds{table=\"%s\"} %.3f%n", rows.table(), age);
            return 0;
        } catch (SQLException e) {
            err.println("cannot read the outbox table " + rows.table() + ": " + e.getMessage()
                    + " (check --jdbc and the credentials; create the table with binomic-jdbc's " + Outbox.SCHEMA_RESOURCE + ")");
            return 1;
        }
    }
}
