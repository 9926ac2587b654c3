package io.binomic.jdbc;

import io.binomic.api.JobHandle;
import io.binomic.api.spi.Message;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskMode;
import io.binomic.api.Uniqueness;
import io.binomic.core.Binomic;
import io.binomic.jdbc.internal.OutboxRows;
import io.binomic.jdbc.internal.RelayedJobHandle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * Submits jobs inside the application's database transaction: each job is a row of the outbox
 * table, written on the caller's {@link Connection}. When the transaction rolls back there is no
 * job, ever; when it commits, an {@link OutboxRelay} stores the job in the broker, once. The job's
 * id is chosen here, so the returned handle is the job's from the start (it reads
 * {@link io.binomic.api.JobState#UNKNOWN} until the relay has stored it; its {@code await} and
 * {@code result} wait for the relay, up to the caller's timeout).
 *
 * <pre>{@code
 * Outbox outbox = Outbox.of(binomic);
 * try (Connection c = dataSource.getConnection()) {
 *     c.setAutoCommit(false);
 *     insertOrder(c, order);
 *     outbox.submit(c, shipOrder, new ShipOrder(order.id()));
 *     c.commit();
 * }
 * }</pre>
 *
 * <p>The argument is encoded by the {@link Binomic}'s payload codec, with every header a submit
 * sets (priority, tracking, trace context). A delay counts from this call. Unique jobs of scope
 * {@link Uniqueness.Scope#FOR_PERIOD} go through; the other scopes and debounce are refused (see
 * {@link #submit(Connection, Task, Object, SubmitOptions)}). The table is created by the migration
 * {@value #SCHEMA_RESOURCE} of this module.
 */
public final class Outbox {
    /** The default table name. */
    public static final String DEFAULT_TABLE = "binomic_outbox";
    /** The migration that creates the default table (PostgreSQL), a resource of this module: see {@link #schemaSql()}. */
    public static final String SCHEMA_RESOURCE = "/db/binomic/V1__binomic_outbox.sql";

    private final Binomic binomic;
    private final OutboxRows rows;
    private final Clock clock;
    /** True: a NOTIFY for PostgreSQL connections; false: never (the relay then polls). */
    private final boolean notify;

    private Outbox(Binomic binomic, String table, boolean notify) {
        this.binomic = Objects.requireNonNull(binomic, "binomic must not be null");
        this.rows = new OutboxRows(table);
        this.clock = Clock.systemUTC();
        this.notify = notify;
    }

    /** An outbox on table {@value #DEFAULT_TABLE} for the jobs of {@code binomic} (started: it encodes arguments with its codec). */
    public static Outbox of(Binomic binomic) {
        return new Outbox(binomic, DEFAULT_TABLE, true);
    }

    /** An outbox on {@code table} (a plain SQL identifier, optionally schema-qualified) for the jobs of {@code binomic}. */
    public static Outbox of(Binomic binomic, String table) {
        return new Outbox(binomic, table, true);
    }

    /**
     * This outbox without the {@code NOTIFY <table>} a submit on a PostgreSQL connection sends by default (delivered at
     * commit, it wakes the relays at once): the relays then find the rows at their next poll. For a database user that
     * may not NOTIFY, or relays that poll anyway.
     */
    public Outbox withoutNotify() {
        return new Outbox(binomic, rows.table(), false);
    }

    /** {@link #submit(Connection, Task, Object, SubmitOptions)} with no option. */
    public <A, R> JobHandle<R> submit(Connection connection, Task<A, R> task, A argument) throws SQLException {
        return submit(connection, task, argument, SubmitOptions.NONE);
    }

    /**
     * Writes one job of {@code task} into the outbox table on {@code connection}, in its current
     * transaction, and returns its handle.
     *
     * @throws IllegalArgumentException as {@link Binomic#submit(Task, Object, SubmitOptions)} does; for a connection in
     *         auto-commit mode (the row would commit at once, outside the caller's transaction); and for what the outbox
     *         cannot keep: a debounce (it replaces a job waiting in the broker), a partition key, and a unique scope other than
     *         {@link Uniqueness.Scope#FOR_PERIOD} (a key given back when the job starts or ends would let a row relayed twice
     *         after a relay crash run twice)
     * @throws SQLException when the insert fails (the caller's transaction decides what happens next); its message says how
     *         to create the table when it is missing or lacks the outbox's columns
     */
    public <A, R> JobHandle<R> submit(Connection connection, Task<A, R> task, A argument, SubmitOptions options) throws SQLException {
        return submitAll(connection, task, Collections.singletonList(argument), options).getFirst();
    }

    /** {@link #submit(Connection, Task, Object, SubmitOptions)} for many jobs, inserted in one batch; the handles in argument order. */
    public <A, R> List<JobHandle<R>> submitAll(Connection connection, Task<A, R> task, Collection<? extends A> arguments,
                                              SubmitOptions options) throws SQLException {
        Objects.requireNonNull(connection, "connection must not be null");
        Objects.requireNonNull(task, "task must not be null");
        Objects.requireNonNull(options, "options must not be null (SubmitOptions.NONE for none)");
        requireKeepable(task, options);
        if (connection.getAutoCommit()) {
            throw new IllegalArgumentException("the connection is in auto-commit mode, so the outbox row would commit at once,"
                    + " outside any transaction of yours, and the job would not commit or roll back with your writes: call"
                    + " connection.setAutoCommit(false) before your writes and commit after the submit (in Spring, submit inside a"
                    + " @Transactional method on DataSourceUtils.getConnection), or use Binomic.submit when no transaction is wanted");
        }
        List<Message> messages = new ArrayList<>(arguments.size());
        for (A argument : arguments) {
            messages.add(binomic.prepare(task, argument, options));
        }
        Instant dueAt = dueAt(task, options);
        rows.insert(connection, messages, dueAt, binomic.config().broker().keyPrefix(), notify && isPostgres(connection) ? rows.channel() : null);
        List<JobHandle<R>> handles = new ArrayList<>(messages.size());
        for (Message m : messages) {
            handles.add(new RelayedJobHandle<>(binomic, task, m.id()));
        }
        return handles;
    }

    /** The outbox table's name. */
    public String table() {
        return rows.table();
    }

    /**
     * The text of the migration {@value #SCHEMA_RESOURCE} (PostgreSQL), for a program that creates the table itself:
     * {@code statement.execute(Outbox.schemaSql())}.
     */
    public static String schemaSql() {
        try (var in = Outbox.class.getResourceAsStream(SCHEMA_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("resource " + SCHEMA_RESOURCE + " is missing from binomic-jdbc's jar: rebuild it");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Instant dueAt(Task<?, ?> task, SubmitOptions options) {
        Optional<Duration> delay = options.delay().or(() -> task.mode() == TaskMode.DELAY ? task.delay() : Optional.empty());
        return delay.map(d -> clock.instant().plus(d)).orElse(null);
    }

    private static void requireKeepable(Task<?, ?> task, SubmitOptions options) {
        Optional<Uniqueness> uniqueness = options.uniqueness().or(task::uniqueness);
        if (uniqueness.isPresent() && uniqueness.get().scope() != Uniqueness.Scope.FOR_PERIOD) {
            throw new IllegalArgumentException("task '" + task.name() + "': unique scope " + uniqueness.get().scope() + " gives its key"
                    + " back when the job starts or ends, so a row the relay stored and then stored again after a crash could run"
                    + " twice; through the outbox use Uniqueness.Scope.FOR_PERIOD (the key is held for its whole time-to-live),"
                    + " or submit after the commit with Binomic.submit");
        }
    }

    static boolean isPostgres(Connection connection) throws SQLException {
        return connection.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT).contains("postgres");
    }
}
