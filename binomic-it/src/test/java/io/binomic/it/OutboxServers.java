package io.binomic.it;

import io.binomic.jdbc.Outbox;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The outbox tests' servers: a PostgreSQL and a Redis of the test class's own, started before its
 * first test and stopped after its last, with the outbox table created once and emptied before each
 * test. Register it on a static field:
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
}
