package io.binomic.jdbc;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Message;
import io.binomic.core.Binomic;
import io.binomic.core.OutboxMonitor;
import io.binomic.jdbc.internal.OutboxRows;
import io.binomic.jdbc.internal.OutboxRows.Row;
import io.binomic.jdbc.internal.RelayClient;
import io.binomic.jdbc.internal.Wakeups;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;

/**
 * Moves committed outbox rows into the broker: locks a batch in insert order ({@code FOR UPDATE
 * SKIP LOCKED}, so several relays share the table), stores each job once by its id
 * ({@link Binomic#submitPrepared}), deletes the rows and commits. A relay that dies between the
 * store and the commit leaves its rows to the next round, whose store of the same ids is a
 * duplicate: one job each. On PostgreSQL it waits with {@code LISTEN} (a commit wakes it at once),
 * elsewhere it polls; while the broker or the database is down it retries, the rows waiting.
 *
 * <pre>{@code
 * try (OutboxRelay relay = OutboxRelay.builder(binomic, dataSource).build().start()) {
 *     ...   // the application runs; close() stops the relay
 * }
 * }</pre>
 *
 * Run it in any process of yours that has a started {@link Binomic} on the broker (the application,
 * a worker process of your own), or with a client of its own on the broker's settings
 * ({@link #builder(BrokerConfig, DataSource)}, as {@link OutboxTool} {@code relay} does), which it
 * connects in its rounds: started while the broker cannot be reached, it waits for the broker, the
 * rows in the table, and relays them once it answers. The worker processes {@code binomic master}
 * starts run none.
 */
public final class OutboxRelay implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(OutboxRelay.class.getName());
    /** The kind of failure of a relay's own client that has not reached the broker yet. */
    private static final String CONNECT = "connect";

    private final RelayClient client;
    private final DataSource dataSource;
    private final OutboxRows rows;
    private final int batchSize;
    private final Duration pollInterval;
    private final boolean listen;
    private final Duration idWindow;
    private final Duration errorBackoff;
    private final String keyPrefix;
    private final Clock clock = Clock.systemUTC();
    private final AtomicLong relayed = new AtomicLong();
    private final AtomicLong duplicates = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();
    private volatile boolean running;
    private volatile boolean listening;
    private volatile Wakeups wakeups;
    private Thread thread;
    /** What the client's /metrics and dashboard read of this relay's table while it runs. */
    private final OutboxMonitor monitor = new OutboxMonitor() {
        @Override
        public String table() {
            return rows.table();
        }

        @Override
        public Reading read() throws SQLException {
            OutboxStats s = stats();
            return new Reading(s.waiting(), s.oldestAge(), s.relay().relayed(), s.relay().duplicates(), s.relay().failures(), s.setAside());
        }
    };

    private OutboxRelay(Builder b) {
        this.client = b.binomic != null ? RelayClient.of(b.binomic) : RelayClient.own(b.broker);
        this.dataSource = b.dataSource;
        this.rows = new OutboxRows(b.table);
        this.batchSize = b.batchSize;
        this.pollInterval = b.pollInterval;
        this.listen = b.listen;
        this.idWindow = b.idWindow;
        this.errorBackoff = b.errorBackoff;
        this.keyPrefix = client.broker().keyPrefix();
    }

    /** A relay of {@code binomic}'s jobs (a started instance on the broker) from the outbox table of {@code dataSource}. */
    public static Builder builder(Binomic binomic, DataSource dataSource) {
        return new Builder(Objects.requireNonNull(binomic, "binomic must not be null"), null, dataSource);
    }

    /**
     * A relay with a client of its own on {@code broker} (where the jobs go, under its key prefix) from the outbox table of
     * {@code dataSource}. It connects the client in its first round, not at {@link #start()}: while the broker cannot be
     * reached it logs one warning, the rows wait, and each round tries again; {@link #close()} closes the client.
     */
    public static Builder builder(BrokerConfig broker, DataSource dataSource) {
        return new Builder(null, Objects.requireNonNull(broker, "broker must not be null"), dataSource);
    }

    /**
     * Starts relaying on a thread of its own, and shows the table's rows waiting and oldest age on
     * the client's {@code /metrics} and dashboard until {@link #close()}; returns this relay.
     *
     * @throws IllegalStateException when the table is missing or lacks the outbox's columns (the message says how to create
     *         it), or the database refuses the credentials (SQLState class 28); a database or the broker of a relay's own client, that cannot be reached does not fail the start: the
     *         relay retries until it can
     * @throws io.binomic.api.ProviderNotFoundException for a relay's own client, when no broker provider on the path takes
     *         the broker's URL
     */
    public synchronized OutboxRelay start() {
        if (thread != null) {
            throw new IllegalStateException("this relay is started already");
        }
        try (Connection c = dataSource.getConnection()) {
            rows.check(c);
        } catch (SQLException e) {
            if (e.getSQLState() != null && e.getSQLState().startsWith("42")) {
                throw new IllegalStateException(e.getMessage(), e);
            }
            if (e.getSQLState() != null && e.getSQLState().startsWith("28")) {
                // Refused credentials do not heal by retrying: a relay that started would report ready and relay nothing.
                throw new IllegalStateException("the database refused the relay's credentials: " + e.getMessage()
                        + "; give the user and password of the application's database", e);
            }
            LOG.log(Level.WARNING, "outbox relay of {0} cannot check its table yet, starting anyway (it retries): {1}", rows.table(),
                    brief(e));
        }
        client.open(monitor);
        running = true;
        thread = Thread.ofPlatform().daemon().name("binomic-outbox-relay").start(this::run);
        return this;
    }

    /**
     * Relays one batch on the calling thread: up to the batch size of committed rows, in insert
     * order, each stored in the broker once and deleted; a row that cannot be read back into a job
     * (or that the broker refuses) is set aside instead, with the reason in its {@code failure}
     * column, and logged once. Returns the number of rows taken.
     *
     * @throws SQLException when the database fails (nothing is deleted; the rows wait)
     * @throws io.binomic.api.BrokerException when the broker fails, or a relay's own client cannot reach it yet (nothing is
     *         deleted; the rows wait)
     */
    public int relayOnce() throws SQLException {
        client.get(); // a relay's own client connects before any row is locked
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                OutboxRows.Batch batch = rows.lockBatch(c, batchSize);
                List<String> setAside = new ArrayList<>();
                for (OutboxRows.Unreadable u : batch.unreadable()) {
                    rows.setAside(c, u.seq(), "cannot be read back into a job: " + u.reason());
                    setAside.add("row seq " + u.seq() + " (job " + u.jobId() + ") aside: it cannot be read back into a job (" + u.reason() + ")");
                }
                List<Row> ours = new ArrayList<>(batch.rows().size());
                // A relay of the wrong prefix sees every row of the writer: one warning per prefix and round, not per row.
                Map<String, List<Row>> foreign = new LinkedHashMap<>();
                for (Row r : batch.rows()) {
                    if (r.keyPrefix() == null || r.keyPrefix().equals(keyPrefix)) {
                        ours.add(r);
                    } else {
                        rows.setAside(c, r.seq(), otherPrefix(r.keyPrefix()));
                        foreign.computeIfAbsent(r.keyPrefix(), k -> new ArrayList<>()).add(r);
                    }
                }
                foreign.forEach((writer, those) -> setAside.add((those.size() == 1 ? "row seq " : those.size() + " rows (the first: seq ")
                        + those.getFirst().seq() + " (job " + those.getFirst().message().id() + ")" + (those.size() == 1 ? "" : ")")
                        + " aside: " + otherPrefix(writer)));
                List<Row> done = new ArrayList<>(ours.size());
                long stored = store(c, ours, done, setAside);
                if (!done.isEmpty()) {
                    rows.delete(c, done);
                }
                c.commit();
                relayed.addAndGet(stored);
                duplicates.addAndGet(done.size() - stored);
                for (String why : setAside) {
                    LOG.log(Level.WARNING, "outbox relay of {0} set {1}; the rows behind it go on. The row stays in the table with its"
                            + " failure column set: fix it and set failure to NULL to relay it, or delete it", rows.table(), why);
                }
                return batch.rows().size() + batch.unreadable().size();
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(c, e);
                throw e;
            }
        }
    }

    /** Why a row of a client with another key prefix is set aside: relayed here, its job would sit where no worker looks. */
    private String otherPrefix(String writer) {
        return "written by a client with broker key prefix '" + writer + "', but this relay stores jobs under key prefix '"
                + keyPrefix + "', where that client's workers never look: run the relay with key prefix '" + writer
                + "' (OutboxTool relay --key-prefix or BINOMIC_BROKER_KEY_PREFIX), then set failure to NULL";
    }

    /**
     * Stores the jobs of {@code batch} in order, consecutive rows of one due time in one pipelined call, and adds the rows
     * done with to {@code done}. A call the broker refuses as invalid is tried again row by row, so that the one row it
     * refuses is set aside and not the others. Returns the jobs stored, duplicates apart.
     */
    private long store(Connection c, List<Row> batch, List<Row> done, List<String> setAside) throws SQLException {
        long stored = 0;
        int from = 0;
        while (from < batch.size()) {
            Instant due = batch.get(from).dueAt();
            int to = from + 1;
            while (to < batch.size() && Objects.equals(batch.get(to).dueAt(), due)) {
                to++;
            }
            List<Row> run = batch.subList(from, to);
            try {
                stored += storeRun(run, due);
                done.addAll(run);
            } catch (IllegalArgumentException refused) {
                for (Row r : run) {
                    try {
                        stored += storeRun(List.of(r), due);
                        done.add(r);
                    } catch (IllegalArgumentException e) {
                        rows.setAside(c, r.seq(), "refused by the broker: " + e.getMessage());
                        setAside.add("row seq " + r.seq() + " (job " + r.message().id() + ") aside: the broker refuses it (" + e.getMessage() + ")");
                    }
                }
            }
            from = to;
        }
        return stored;
    }

    /** Stores one run of rows of one due time; returns how many were stored, not found stored already. */
    private long storeRun(List<Row> run, Instant due) {
        List<Message> messages = new ArrayList<>(run.size());
        for (Row r : run) {
            messages.add(r.message());
        }
        List<UUID> ids = client.get().submitPrepared(messages, due, idWindow);
        long stored = 0;
        for (int i = 0; i < ids.size(); i++) {
            stored += messages.get(i).id().equals(ids.get(i)) ? 1 : 0;
        }
        return stored;
    }

    /** Rows waiting in the table and how old the oldest is, with this relay's counts: see {@link OutboxStats}. */
    public OutboxStats stats() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            OutboxRows.Waiting w = rows.waiting(c);
            Duration age = w.oldest() == null ? Duration.ZERO : Duration.between(w.oldest(), clock.instant());
            return new OutboxStats(rows.table(), w.rows(), age.isNegative() ? Duration.ZERO : age, w.setAside(),
                    new OutboxStats.Counts(relayed.get(), duplicates.get(), failures.get(), listening));
        }
    }

    /** The outbox table this relay reads. */
    public String table() {
        return rows.table();
    }

    /** The jobs this relay has stored in the broker since it was built, duplicates apart. */
    public long relayed() {
        return relayed.get();
    }

    /** The rows this relay found stored in the broker already since it was built (deleted, nothing stored). */
    public long duplicates() {
        return duplicates.get();
    }

    /** The rounds that failed since the relay was built (the broker or the database down). */
    public long failures() {
        return failures.get();
    }

    /** True when the relay waits on PostgreSQL's LISTEN, false while it polls. */
    public boolean listening() {
        return listening;
    }

    private void run() {
        String failing = null;
        while (running) {
            try {
                if (listen && wakeups == null) {
                    wakeups = Wakeups.open(dataSource, rows.channel());
                    listening = wakeups.listens();
                }
                int n = relayOnce();
                if (CONNECT.equals(failing)) {
                    LOG.log(Level.INFO, "outbox relay of {0} reached the broker at {1}: relaying the rows that waited", rows.table(),
                            client.broker().redactedUrl());
                } else if (failing != null) {
                    LOG.log(Level.INFO, "outbox relay of {0} recovered", rows.table());
                }
                failing = null;
                if (n < batchSize) {
                    (wakeups == null ? Wakeups.POLLING : wakeups).await(pollInterval.toMillis());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (SQLException | RuntimeException e) {
                if (!running) {
                    return;
                }
                failures.incrementAndGet();
                // A failure repeats every round while the broker or the database is down: one warning per outage and cause.
                String cause = e instanceof SQLException sql ? rows.unusable(sql).getMessage() : brief(e);
                String kind = e instanceof SQLException ? "database" : client.connected() ? "broker" : CONNECT;
                Level level = kind.equals(failing) ? Level.DEBUG : Level.WARNING;
                if (kind.equals(CONNECT)) {
                    LOG.log(level, "outbox relay of {0} cannot reach the broker at {1} yet, retrying every {2} ms (the rows wait in"
                            + " the table): {3}", rows.table(), client.broker().redactedUrl(), errorBackoff.toMillis(), cause);
                } else {
                    LOG.log(level, "outbox relay of {0} failed, retrying every {1} ms (the rows wait): {2}", rows.table(),
                            errorBackoff.toMillis(), cause);
                }
                failing = kind;
                dropWakeups();
                try {
                    Thread.sleep(errorBackoff.toMillis());
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /**
     * A failure in one short line: the broker's message (its own mapping of the client's errors), cut before any command
     * text or arguments a client library appends (a script's source, buffers), and at its first line.
     */
    static String brief(Exception e) {
        String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        for (String tail : List.of("\n", ", command:", " command:", ", params:", "params:")) {
            int at = m.indexOf(tail);
            m = at > 0 ? m.substring(0, at) : m;
        }
        return m.length() > 300 ? m.substring(0, 300) + "..." : m;
    }

    private void dropWakeups() {
        Wakeups w = wakeups;
        wakeups = null;
        listening = false;
        if (w != null) {
            w.close();
        }
    }

    private static void rollbackQuietly(Connection c, Exception cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    /**
     * Stops the relay: the batch in flight finishes or is rolled back; the rows not relayed wait for the next relay. A
     * relay's own client is closed, once a start of it under way has ended.
     */
    @Override
    public void close() {
        Thread t;
        synchronized (this) {
            running = false;
            t = thread;
        }
        if (t == null) {
            return;
        }
        dropWakeups();
        t.interrupt();
        try {
            t.join(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            client.close();
        }
    }

    /** Builds an {@link OutboxRelay}. */
    public static final class Builder {
        private final Binomic binomic;
        private final BrokerConfig broker;
        private final DataSource dataSource;
        private String table = Outbox.DEFAULT_TABLE;
        private int batchSize = 500;
        private Duration pollInterval = Duration.ofSeconds(1);
        private boolean listen = true;
        private Duration idWindow = Duration.ofHours(1);
        private Duration errorBackoff = Duration.ofSeconds(1);

        private Builder(Binomic binomic, BrokerConfig broker, DataSource dataSource) {
            this.binomic = binomic;
            this.broker = broker;
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
        }

        /** The outbox table (default {@value Outbox#DEFAULT_TABLE}). */
        public Builder table(String value) {
            new OutboxRows(value);
            this.table = value;
            return this;
        }

        /** Rows per batch, 1 to 10,000 (default 500): one transaction and one pipelined broker call each. */
        public Builder batchSize(int value) {
            if (value < 1 || value > 10_000) {
                throw new IllegalArgumentException("outbox relay batch size must be 1 to 10000, got " + value);
            }
            this.batchSize = value;
            return this;
        }

        /**
         * How long the relay waits for rows between two empty rounds (default 1 s): the latency of a
         * commit when nothing wakes it (no LISTEN), and a safety net when something does.
         */
        public Builder pollInterval(Duration value) {
            requirePositive("poll interval", value);
            this.pollInterval = value;
            return this;
        }

        /** Whether to wait with PostgreSQL's LISTEN where the database and driver have it (default true); false polls. */
        public Builder listen(boolean value) {
            this.listen = value;
            return this;
        }

        /**
         * How long the broker remembers a relayed job's id (default 1 hour): a row relayed again
         * within it (its relay died before its commit) is a duplicate. One small Redis key per job
         * for this long; it must outlast the longest database outage a relay can be caught in.
         */
        public Builder idWindow(Duration value) {
            requirePositive("id window", value);
            this.idWindow = value;
            return this;
        }

        /** The pause after a failed round (default 1 s), while the database or the broker is down. */
        public Builder errorBackoff(Duration value) {
            requirePositive("error backoff", value);
            this.errorBackoff = value;
            return this;
        }

        /** The relay, not started. */
        public OutboxRelay build() {
            return new OutboxRelay(this);
        }

        private static void requirePositive(String what, Duration value) {
            if (value == null || value.isNegative() || value.toMillis() < 1) {
                throw new IllegalArgumentException("outbox relay " + what + " must be at least 1 ms, got " + value);
            }
        }
    }
}
