package io.binomic.jdbc;

import io.binomic.api.BrokerConfig;
import io.binomic.api.ProviderNotFoundException;
import io.binomic.core.internal.cli.ToolOptions;
import io.binomic.core.internal.process.Settings;
import io.binomic.jdbc.internal.OutboxRows;
import io.binomic.jdbc.internal.UrlDataSource;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
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
 * java -cp "$(cat relay.classpath)" io.binomic.jdbc.OutboxTool relay \
 *      --jdbc jdbc:postgresql://db/app --user app --password-env PGPASSWORD --broker redis://redis:6379
 * </pre>
 *
 * {@code relay.classpath}: {@code mvn dependency:build-classpath -Dmdep.outputFile=relay.classpath} on a POM that
 * depends on binomic-jdbc, binomic-redis and the JDBC driver.
 */
public final class OutboxTool {
    /** Every line this tool prints on stderr starts with it, as the {@code binomic} command's do. */
    private static final String PREFIX = "binomic outbox: ";
    private static final String USAGE = """
            usage: OutboxTool status --jdbc URL [--user U] [--password-env VAR] [--table T]
                   OutboxTool relay  --jdbc URL [--user U] [--password-env VAR] [--table T] [--broker URL] [--key-prefix P]
                                     [--config FILE] [--batch N] [--poll-ms MS] [--no-listen]
            --password-env VAR names an environment variable that holds the database password.
            relay takes the broker settings as the binomic command and its workers do: --broker and --key-prefix, else the
            BINOMIC_* environment variables (BINOMIC_BROKER_URL, BINOMIC_BROKER_KEY_PREFIX, ...), else the --config file
            (default $BINOMIC_CONFIG). The key prefix must be the one of the clients that write the rows and of the workers.""";

    /** After a usage error, in place of the usage, which would bury the one line that says what is wrong. */
    private static final String HELP_HINT = "Run 'OutboxTool --help' for its options.";

    private static final List<String> STATUS_OPTIONS = List.of("jdbc", "user", "password-env", "table");
    private static final List<String> RELAY_OPTIONS = List.of("jdbc", "user", "password-env", "table", "broker", "key-prefix",
            "config", "batch", "poll-ms");

    private OutboxTool() { }

    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command; returns the exit status (0 done, 2 a usage error, 1 a failure). */
    static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        if (args.length == 1 && List.of("--help", "-h", "help").contains(args[0])) {
            out.println(USAGE);
            return 0;
        }
        if (args.length == 0 || !List.of("status", "relay").contains(args[0])) {
            err.println(PREFIX + (args.length == 0 ? "a command is required" : "unknown command '" + args[0] + "'") + "\n" + HELP_HINT);
            return 2;
        }
        ToolOptions options;
        try {
            options = ToolOptions.parse(List.of(args).subList(1, args.length), args[0].equals("status") ? STATUS_OPTIONS : RELAY_OPTIONS,
                    args[0].equals("status") ? List.of() : List.of("no-listen"));
        } catch (IllegalArgumentException e) {
            err.println(PREFIX + args[0] + ": " + e.getMessage() + "\n" + HELP_HINT);
            return 2;
        }
        if (!options.has("jdbc")) {
            err.println(PREFIX + "--jdbc URL is required (the application database, e.g. jdbc:postgresql://host/db)\n" + HELP_HINT);
            return 2;
        }
        String passwordEnv = options.value("password-env").orElse(null);
        String password = passwordEnv == null ? null : System.getenv(passwordEnv);
        if (passwordEnv != null && password == null) {
            err.println(PREFIX + "--password-env " + passwordEnv + ": the environment variable " + passwordEnv + " is not set;"
                    + " export it with the database password, or leave --password-env out");
            return 2;
        }
        String jdbc = options.value("jdbc").orElseThrow();
        DataSource dataSource = new UrlDataSource(jdbc, options.value("user").orElse(null), password);
        String table = options.value("table").orElse(Outbox.DEFAULT_TABLE);
        if (args[0].equals("status")) {
            return status(dataSource, jdbc, new OutboxRows(table), out, err);
        }
        try {
            // A relay whose URL no driver takes would otherwise start, print READY and fail every round.
            DriverManager.getDriver(jdbc);
        } catch (SQLException e) {
            err.println(PREFIX + "cannot relay from " + jdbc + ": " + e.getMessage() + hint(e, jdbc));
            return 1;
        }
        BrokerConfig broker;
        OutboxRelay.Builder builder;
        try {
            broker = brokerSettings(options, System.getenv());
            if (broker == null) {
                err.println(PREFIX + "relay needs a broker: --broker URL or " + Settings.BROKER_URL_ENV
                        + " (where the jobs go, e.g. redis://host:6379)\n" + HELP_HINT);
                return 2;
            }
            // A client of the relay's own, connected in its rounds: a broker down at the start delays the jobs, not the relay.
            builder = OutboxRelay.builder(broker, dataSource).table(table)
                    .batchSize(options.intValue("batch", 500, 1))
                    .pollInterval(Duration.ofMillis(options.intValue("poll-ms", 1000, 1)))
                    .listen(!options.has("no-listen"));
        } catch (IllegalArgumentException e) {
            err.println(PREFIX + e.getMessage() + "\n" + HELP_HINT);
            return 2;
        }
        return relay(builder, broker, jdbc, out, err);
    }

    /**
     * The broker settings of the core's one source ({@link Settings}: the file, the {@code BINOMIC_*} variables), with
     * {@code --broker} and {@code --key-prefix} on top; null when no broker URL is given anywhere.
     */
    private static BrokerConfig brokerSettings(ToolOptions options, Map<String, String> env) {
        Settings settings = Settings.load(options.value("config").map(Path::of), env);
        if (options.has("broker")) {
            settings = settings.with("broker.url", options.value("broker").orElseThrow(), "--broker");
        }
        if (options.has("key-prefix")) {
            settings = settings.with("broker.keyPrefix", options.value("key-prefix").orElseThrow(), "--key-prefix");
        }
        return settings.value("broker.url").isEmpty() ? null : settings.broker(null);
    }

    private static int relay(OutboxRelay.Builder builder, BrokerConfig broker, String jdbcUrl, PrintStream out, PrintStream err)
            throws InterruptedException {
        try (OutboxRelay relay = builder.build().start()) {
            out.println("OUTBOX RELAY READY " + relay.table() + (relay.listening() ? " (LISTEN)" : "") + " key-prefix "
                    + broker.keyPrefix());
            out.flush();
            new CountDownLatch(1).await(); // until the process is stopped
            return 0;
        } catch (IllegalStateException e) {
            err.println(PREFIX + e.getMessage() + hint(e.getCause(), jdbcUrl));
            return 1;
        } catch (ProviderNotFoundException e) {
            err.println(PREFIX + e.getMessage());
            return 1;
        }
    }

    /**
     * {@code status}: prints the rows waiting in {@code table} and the oldest age, and the same as Prometheus metrics.
     * Called by {@code binomic outbox} when this module is on its path. Returns 0, or 1 when the table cannot be read.
     *
     * @param user the database user; null to connect without one (or with the URL's)
     */
    public static int status(String jdbcUrl, String user, String password, String table, PrintStream out, PrintStream err) {
        return status(new UrlDataSource(jdbcUrl, user, password), jdbcUrl, new OutboxRows(table), out, err);
    }

    private static int status(DataSource dataSource, String jdbcUrl, OutboxRows rows, PrintStream out, PrintStream err) {
        try (Connection c = dataSource.getConnection()) {
            OutboxRows.Waiting w = rows.waiting(c);
            double age = w.oldest() == null ? 0 : Math.max(0, Duration.between(w.oldest(), Instant.now()).toMillis() / 1000.0);
            out.printf(Locale.ROOT, "%s: %d waiting, oldest %.1f s, %d set aside%n", rows.table(), w.rows(), age, w.setAside());
            out.printf(Locale.ROOT, "binomic_outbox_waiting{table=\"%s\"} %d%n", rows.table(), w.rows());
            out.printf(Locale.ROOT, "binomic_outbox_oldest_age_seconds{table=\"%s\"} %.3f%n", rows.table(), age);
            out.printf(Locale.ROOT, "binomic_outbox_set_aside{table=\"%s\"} %d%n", rows.table(), w.setAside());
            return 0;
        } catch (SQLException e) {
            err.println(PREFIX + "cannot read the outbox table " + rows.table() + ": " + e.getMessage() + hint(e, jdbcUrl));
            return 1;
        }
    }

    /** What to do about a failure to reach the database, when the message does not say it already. */
    private static String hint(Throwable e, String jdbcUrl) {
        if (e instanceof SQLException sql && sql.getMessage() != null && sql.getMessage().startsWith("No suitable driver")) {
            return " (no JDBC driver on the path takes " + jdbcUrl + ": add the driver's jar for that database to -cp, e.g."
                    + " postgresql.jar for jdbc:postgresql:, mariadb-java-client.jar for jdbc:mariadb:, mysql-connector-j.jar for"
                    + " jdbc:mysql:)";
        }
        if (e instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("42")) {
            return ""; // the table's own message says how to create it
        }
        if (e instanceof SQLException sql && sql.getSQLState() != null && sql.getSQLState().startsWith("28")) {
            return " (check --user, and the password in the variable --password-env names)";
        }
        return e instanceof SQLException ? " (check --jdbc and the credentials)" : "";
    }
}
