package io.binomic.jdbc.internal;

import io.binomic.api.Task;
import io.binomic.api.spi.Message;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The SQL of one outbox table, and how a message is written to a row and read back from it. The
 * statements are plain SQL plus {@code FOR UPDATE SKIP LOCKED}, so that several relays share the
 * rows without waiting on each other's locks.
 */
public final class OutboxRows {
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

    private static final String COLUMNS = "seq, job_id, queue, task, headers, payload, created_ms, due_ms, key_prefix";

    private final String table;

    /**
     * @throws IllegalArgumentException when {@code table} is not a plain SQL identifier (it is put into the statements)
     */
    public OutboxRows(String table) {
        if (table == null || !IDENTIFIER.matcher(table).matches()) {
            throw new IllegalArgumentException("outbox table name must be a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*, optionally"
                    + " schema-qualified), got '" + table + "'");
        }
        this.table = table;
    }

    public String table() {
        return table;
    }

    /** The channel NOTIFY and LISTEN use for this table: its name without the schema. */
    public String channel() {
        return table.substring(table.indexOf('.') + 1).toLowerCase(Locale.ROOT);
    }

    /**
     * A row waiting in the table: its sequence number, its message, its due time (null for at once) and the broker key
     * prefix of the client that wrote it (null when written without one).
     */
    public record Row(long seq, Message message, Instant dueAt, String keyPrefix) { }

    /**
     * Inserts one row per message, in order, in one batch on {@code connection} (the caller's transaction); {@code keyPrefix}
     * is the writing client's broker key prefix, which a relay checks against its own.
     */
    public void insert(Connection connection, List<Message> messages, Instant dueAt, String keyPrefix, String notifyChannel)
            throws SQLException {
        String sql = "INSERT INTO " + table + " (job_id, queue, task, headers, payload, created_ms, due_ms, key_prefix)"
                + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)";
        try (PreparedStatement insert = connection.prepareStatement(sql)) {
            insertAll(insert, messages, dueAt, keyPrefix);
        } catch (SQLException e) {
            throw unusable(e);
        }
        if (notifyChannel != null) {
            // Delivered at commit only, once per transaction whatever the number of rows: a rollback wakes no relay.
            try (var notify = connection.createStatement()) {
                notify.execute("NOTIFY " + notifyChannel);
            }
        }
    }

    private static void insertAll(PreparedStatement insert, List<Message> messages, Instant dueAt, String keyPrefix) throws SQLException {
        for (Message m : messages) {
            insert.setString(1, m.id().toString());
            insert.setString(2, m.queue());
            insert.setString(3, m.task());
            insert.setString(4, encodeHeaders(m.wireHeaders()));
            insert.setBytes(5, m.payload());
            insert.setLong(6, m.enqueuedAt().toEpochMilli());
            if (dueAt == null) {
                insert.setNull(7, Types.BIGINT);
            } else {
                insert.setLong(7, dueAt.toEpochMilli());
            }
            insert.setString(8, keyPrefix);
            insert.addBatch();
        }
        if (messages.size() == 1) {
            insert.executeUpdate();
            insert.clearBatch();
        } else {
            insert.executeBatch();
        }
    }

    /**
     * Checks that the table exists with the outbox's columns, by reading none of its rows.
     *
     * @throws SQLException {@link #unusable} when it does not; the driver's own when the database cannot be reached
     */
    public void check(Connection connection) throws SQLException {
        try (PreparedStatement probe = connection.prepareStatement("SELECT " + COLUMNS + ", failure FROM " + table + " WHERE 1 = 0")) {
            probe.executeQuery().close();
        } catch (SQLException e) {
            throw unusable(e);
        }
    }

    /**
     * {@code e} with the fix in its message when the statement was refused for the table (SQL state class 42: a
     * missing table or column, no privilege), else {@code e} itself.
     */
    public SQLException unusable(SQLException e) {
        // A failed batch carries the statement's own error behind it.
        String state = e.getSQLState() == null && e.getNextException() != null ? e.getNextException().getSQLState() : e.getSQLState();
        if (state == null || !state.startsWith("42")) {
            return e;
        }
        return new SQLException("the outbox table " + table + " is missing, lacks the outbox's columns (" + COLUMNS + ", failure)"
                + " or may not be used by this user: " + e.getMessage().lines().findFirst().orElse("") + ". Create it with binomic-jdbc's migration "
                + "db/binomic/V1__binomic_outbox.sql (Outbox.schemaSql() returns its text), or name the right table", state, e);
    }

    /** A row that cannot be read back into a message, and why. */
    public record Unreadable(long seq, String jobId, String reason) { }

    /** The rows of one round: those to relay, and those that cannot be read. */
    public record Batch(List<Row> rows, List<Unreadable> unreadable) {
        public boolean isEmpty() {
            return rows.isEmpty() && unreadable.isEmpty();
        }
    }

    /** Locks and reads up to {@code limit} rows not set aside, in insert order, skipping rows another relay holds. */
    public Batch lockBatch(Connection connection, int limit) throws SQLException {
        String sql = "SELECT " + COLUMNS + " FROM " + table + " WHERE failure IS NULL ORDER BY seq LIMIT ? FOR UPDATE SKIP LOCKED";
        List<Row> rows = new ArrayList<>();
        List<Unreadable> unreadable = new ArrayList<>();
        try (PreparedStatement select = connection.prepareStatement(sql)) {
            select.setInt(1, limit);
            try (ResultSet rs = select.executeQuery()) {
                while (rs.next()) {
                    try {
                        long due = rs.getLong(8);
                        Instant dueAt = rs.wasNull() ? null : Instant.ofEpochMilli(due);
                        requireNames(rs.getString(3), rs.getString(4));
                        Message m = Message.fromWire(jobId(rs.getString(2)), rs.getString(4), rs.getString(3), 1,
                                Instant.ofEpochMilli(rs.getLong(7)), rs.getBytes(6), decodeHeaders(rs.getString(5)));
                        rows.add(new Row(rs.getLong(1), m, dueAt, rs.getString(9)));
                    } catch (IllegalArgumentException e) {
                        unreadable.add(new Unreadable(rs.getLong(1), rs.getString(2), e.getMessage()));
                    } catch (RuntimeException e) {
                        unreadable.add(new Unreadable(rs.getLong(1), rs.getString(2), e.toString()));
                    }
                }
            }
        }
        return new Batch(rows, unreadable);
    }

    /**
     * Checks the row's queue and task names as a submit does ({@link Task.Builder#build}): a name the broker keys cannot
     * hold would be stored under a key no worker reads.
     */
    private static void requireNames(String queue, String task) {
        Task.builder(task).queue(queue).build();
    }

    private static UUID jobId(String text) {
        try {
            return UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("job_id '" + text + "' is not a UUID", e);
        }
    }

    /** Sets row {@code seq} aside: its {@code failure} column says why, and no relay takes it again. */
    public void setAside(Connection connection, long seq, String reason) throws SQLException {
        try (PreparedStatement update = connection.prepareStatement("UPDATE " + table + " SET failure = ? WHERE seq = ?")) {
            update.setString(1, reason.length() > 1000 ? reason.substring(0, 1000) : reason);
            update.setLong(2, seq);
            update.executeUpdate();
        }
    }

    /** Deletes the rows of {@code rows}. */
    public void delete(Connection connection, List<Row> rows) throws SQLException {
        StringBuilder sql = new StringBuilder("DELETE FROM ").append(table).append(" WHERE seq IN (");
        for (int i = 0; i < rows.size(); i++) {
            sql.append(i == 0 ? "?" : ", ?");
        }
        sql.append(')');
        try (PreparedStatement delete = connection.prepareStatement(sql.toString())) {
            for (int i = 0; i < rows.size(); i++) {
                delete.setLong(i + 1, rows.get(i).seq());
            }
            delete.executeUpdate();
        }
    }

    /** Rows waiting, the creation time of the oldest (null when none waits), and the rows set aside. */
    public record Waiting(long rows, Instant oldest, long setAside) { }

    public Waiting waiting(Connection connection) throws SQLException {
        String sql = "SELECT COUNT(*) - COUNT(failure), MIN(CASE WHEN failure IS NULL THEN created_ms END), COUNT(failure) FROM " + table;
        try (PreparedStatement count = connection.prepareStatement(sql); ResultSet rs = count.executeQuery()) {
            rs.next();
            long rows = rs.getLong(1);
            long oldest = rs.getLong(2);
            Instant at = rs.wasNull() ? null : Instant.ofEpochMilli(oldest);
            return new Waiting(rows, at, rs.getLong(3));
        } catch (SQLException e) {
            throw unusable(e);
        }
    }

    /** Headers as {@code application/x-www-form-urlencoded} text: any character survives, in one portable TEXT column. */
    static String encodeHeaders(Map<String, String> headers) {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<String, String> e : headers.entrySet()) {
            if (!out.isEmpty()) {
                out.append('&');
            }
            out.append(URLEncoder.encode(e.getKey(), StandardCharsets.UTF_8)).append('=')
                    .append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
        }
        return out.toString();
    }

    static Map<String, String> decodeHeaders(String text) {
        if (text.isEmpty()) {
            return Collections.emptyMap();
        }
        Map<String, String> headers = new LinkedHashMap<>();
        for (String pair : text.split("&")) {
            int eq = pair.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("headers: '" + pair + "' has no '=' (each header is name=value, form-encoded,"
                        + " joined by '&')");
            }
            try {
                headers.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
                        URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("headers: '" + pair + "' is not form-encoded (" + e.getMessage() + ")", e);
            }
        }
        return headers;
    }
}
