package io.binomic.it;

import io.binomic.jdbc.Outbox;
import io.binomic.jdbc.OutboxTool;
import io.binomic.testsupport.PostgresServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The outbox tests' servers: a PostgreSQL and a Redis of the test class's own, started before its
 * first test and stopped after its last, with the outbox table created once and emptied before each
 * test; and what those tests share besides: {@code OutboxTool relay} in a JVM of its own, and the
 * relay's log lines. Register it on a static field:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final OutboxServers servers = new OutboxServers();
 * }</pre>
 */
final class OutboxServers implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback {
    private PostgresServer postgres;
    private RedisServer redis;
    private PGSimpleDataSource dataSource;

    @Override
    public void beforeAll(ExtensionContext context) throws SQLException {
        postgres = PostgresServer.startNew();
        redis = RedisServer.startNew();
        dataSource = new PGSimpleDataSource();
        dataSource.setURL(postgres.jdbcUrl());
        execute(Outbox.schemaSql());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (redis != null) {
            redis.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    /** Each test starts from an empty outbox: rows a test left would be relayed into the next. */
    @Override
    public void beforeEach(ExtensionContext context) throws SQLException {
        execute("DELETE FROM binomic_outbox");
    }

    PostgresServer postgres() {
        return postgres;
    }

    RedisServer redis() {
        return redis;
    }

    PGSimpleDataSource dataSource() {
        return dataSource;
    }

    /** Runs one SQL statement on a connection of its own, auto-committed. */
    void execute(String statement) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute(statement);
        }
    }

    /** The rows of the outbox table {@code where} selects ({@code ""} for all of them). */
    long count(String where) {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM binomic_outbox" + where)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot count the outbox rows", e);
        }
    }

    /**
     * Starts {@code OutboxTool relay} on this database and {@code brokerUrl} in a JVM of its own, polling every 200 ms, with
     * {@code env} added to its environment; its output and errors go to {@code lines}. Destroy it after.
     */
    Process relayTool(String brokerUrl, Map<String, String> env, List<String> lines) throws IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), OutboxTool.class.getName(), "relay", "--jdbc", postgres.jdbcUrl(),
                "--broker", brokerUrl, "--poll-ms", "200"));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(env);
        Process relay = builder.start();
        CompletableFuture.runAsync(() -> new BufferedReader(new InputStreamReader(relay.getInputStream(),
                StandardCharsets.UTF_8)).lines().forEach(lines::add));
        return relay;
    }

    /**
     * A handler that adds what a {@code java.util.logging} logger writes at INFO and above to {@code into}, one entry
     * {@code "LEVEL message"} each (the exception after a line break); add it to the logger, and remove it after.
     */
    static Handler capture(List<String> into) {
        SimpleFormatter text = new SimpleFormatter();
        return new Handler() {
            @Override
            public void publish(LogRecord r) {
                if (r.getLevel().intValue() >= Level.INFO.intValue()) {
                    String m = text.formatMessage(r);
                    into.add(r.getLevel() + " " + m + (r.getThrown() == null ? "" : "\n" + r.getThrown()));
                }
            }

            @Override
            public void flush() { }

            @Override
            public void close() { }
        };
    }
}
