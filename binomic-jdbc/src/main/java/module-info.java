/**
 * Binomic's transactional outbox: {@link io.binomic.jdbc.Outbox} writes a job into a table of the
 * application's database inside the caller's transaction, and {@link io.binomic.jdbc.OutboxRelay}
 * moves committed rows into the broker, each job once. Any JDBC database with
 * {@code FOR UPDATE SKIP LOCKED}; on PostgreSQL the relay wakes on {@code LISTEN/NOTIFY} when the
 * PostgreSQL driver is present, and polls otherwise.
 */
module io.binomic.jdbc {
    requires transitive io.binomic.core;
    requires transitive java.sql;
    requires static org.postgresql.jdbc;

    exports io.binomic.jdbc;
}
