package io.binomic.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * A PostgreSQL connection that listens on the outbox's channel: {@link #await} returns as soon as a
 * transaction that wrote rows commits. Loaded only when the PostgreSQL driver is present.
 */
final class PgWakeups implements Wakeups {
    private final Connection connection;
    private final PGConnection pg;

    private PgWakeups(Connection connection, PGConnection pg) {
        this.connection = connection;
        this.pg = pg;
    }

    /** Listens on {@code channel} on {@code connection} (taken over: closed with this), or returns null when it is not PostgreSQL's driver. */
    static PgWakeups listen(Connection connection, String channel) throws SQLException {
        if (!connection.isWrapperFor(PGConnection.class)) {
            return null;
        }
        connection.setAutoCommit(true);
        try (Statement s = connection.createStatement()) {
            s.execute("LISTEN " + channel);
        }
        return new PgWakeups(connection, connection.unwrap(PGConnection.class));
    }

    @Override
    public boolean await(long millis) throws SQLException {
        PGNotification[] notes = pg.getNotifications((int) Math.max(1, Math.min(Integer.MAX_VALUE, millis)));
        return notes != null && notes.length > 0;
    }

    @Override
    public boolean listens() {
        return true;
    }

    @Override
    public void close() {
        try {
            connection.close();
        } catch (SQLException ignored) {
            // The connection is being dropped: nothing to keep.
        }
    }
}
