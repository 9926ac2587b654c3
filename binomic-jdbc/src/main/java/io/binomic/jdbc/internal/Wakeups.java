package io.binomic.jdbc.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;
import javax.sql.DataSource;

/** How a relay waits for new rows: a PostgreSQL LISTEN, or a plain sleep between polls. */
public interface Wakeups extends AutoCloseable {

    /** Waits up to {@code millis} for a commit that wrote rows; true when one was announced, false on the timeout. */
    boolean await(long millis) throws SQLException, InterruptedException;

    /** True when commits wake it (LISTEN), false when it only sleeps. */
    boolean listens();

    @Override
    void close();

    /** Sleeps for the poll interval: a database without notifications. */
    Wakeups POLLING = new Wakeups() {
        @Override
        public boolean await(long millis) throws InterruptedException {
            Thread.sleep(millis);
            return false;
        }

        @Override
        public boolean listens() {
            return false;
        }

        @Override
        public void close() { }
    };

    /**
     * A LISTEN on {@code channel} over a connection of its own when {@code dataSource} is PostgreSQL's
     * and its driver is present, else {@link #POLLING}.
     */
    static Wakeups open(DataSource dataSource, String channel) throws SQLException {
        Connection connection = dataSource.getConnection();
        try {
            if (connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT).contains("postgres")) {
                Wakeups listening = PgWakeups.listen(connection, channel);
                if (listening != null) {
                    return listening;
                }
            }
        } catch (NoClassDefFoundError absent) {
            // PostgreSQL's driver is not on the path (another driver answers as PostgreSQL): poll.
        } catch (SQLException | RuntimeException e) {
            connection.close();
            throw e;
        }
        connection.close();
        return POLLING;
    }
}
