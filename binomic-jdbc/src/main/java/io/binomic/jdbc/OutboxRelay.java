package io.binomic.jdbc;

import io.binomic.api.spi.Message;
import io.binomic.core.Binomic;
import io.binomic.core.OutboxMonitor;
import io.binomic.jdbc.internal.OutboxRows;
import io.binomic.jdbc.internal.OutboxRows.Row;
import io.binomic.jdbc.internal.Wakeups;
import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
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
 * Run it in any process that has a started {@link Binomic} on the broker: the application, a worker
 * process, the master's; or {@link OutboxTool} {@code relay} on its own.
 */
public final class OutboxRelay implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(OutboxRelay.class.getName());

    private final Binomic binomic;
    private final DataSource dataSource;
    private final OutboxRows rows;
    private final int batchSize;
    private final Duration pollInterval;
    private final boolean listen;
    private final Duration idWindow;
    private final Duration errorBackoff;
    private final Clock clock = Clock.systemUTC();
    private final AtomicLong relayed = new AtomicLong();
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
            return new Reading(s.waiting(), s.oldestAge(), s.relayed(), s.failures());
        }
    };

    private OutboxRelay(Builder b) {
        this.binomic = b.binomic;
        this.dataSource = b.dataSource;
        this.rows = new OutboxRows(b.table);
        this.batchSize = b.batchSize;
        this.pollInterval = b.pollInterval;
        this.listen = b.listen;
        this.idWindow = b.idWindow;
        this.errorBackoff = b.errorBackoff;
    }

    /** A relay of {@code binomic}'s jobs (a started instance on the broker) from the outbox table of {@code dataSource}. */
    public static Builder builder(Binomic binomic, DataSource dataSource) {
        return new Builder(binomic, dataSource);
    }

    /**
     * Starts relaying on a thread of its own, and shows the table's rows waiting and oldest age on
     * the client's {@code /metrics} and dashboard until {@link #close()}; returns this relay.
     */
    public synchronized OutboxRelay start() {
        if (thread != null) {
            throw new IllegalStateException("this relay is started already");
        }
        running = true;
        thread = Thread.ofPlatform().daemon().name("binomic-outbox-relay").start(this::run);
        binomic.addOutboxMonitor(monitor);
        return this;
    }

    /**
     * Relays one batch on the calling thread: up to the batch size of committed rows, in insert
     * order, each stored in the broker once and deleted. Returns the number of rows relayed.
     *
     * @throws SQLException when the database fails (nothing is deleted; the rows wait)
     * @throws io.binomic.api.BrokerException when the broker fails (nothing is deleted; the rows wait)
     */
    public int relayOnce() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                List<Row> batch = rows.lockBatch(c, batchSize);
                if (!batch.isEmpty()) {
                    store(batch);
                    rows.delete(c, batch);
                }
                c.commit();
                relayed.addAndGet(batch.size());
                return batch.size();
            } catch (SQLException | RuntimeException e) {
                rollbackQuietly(c, e);
                throw e;
            }
        }
    }

    /** Stores the jobs of {@code batch} in order: consecutive rows of one due time in one pipelined call. */
    private void store(List<Row> batch) {
        int from = 0;
        while (from < batch.size()) {
            Instant due = batch.get(from).dueAt();
            int to = from + 1;
            while (to < batch.size() && Objects.equals(batch.get(to).dueAt(), due)) {
                to++;
            }
            List<Message> run = new ArrayList<>(to - from);
            for (Row r : batch.subList(from, to)) {
                run.add(r.message());
            }
            binomic.submitPrepared(run, due, idWindow);
            from = to;
        }
    }

    /** Rows waiting in the table and how old the oldest is, with this relay's counts: see {@link OutboxStats}. */
    public OutboxStats stats() throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            OutboxRows.Waiting w = rows.waiting(c);
            Duration age = w.oldest() == null ? Duration.ZERO : Duration.between(w.oldest(), clock.instant());
            return new OutboxStats(rows.table(), w.rows(), age.isNegative() ? Duration.ZERO : age, relayed.get(), failures.get(), listening);
        }
    }

    /** The outbox table this relay reads. */
    public String table() {
        return rows.table();
    }

    /** The rows this relay has moved into the broker since it was built. */
    public long relayed() {
        return relayed.get();
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
        boolean failing = false;
        while (running) {
            try {
                if (listen && wakeups == null) {
                    wakeups = Wakeups.open(dataSource, rows.channel());
                    listening = wakeups.listens();
                }
                int n = relayOnce();
                if (failing) {
                    LOG.log(Level.INFO, "outbox relay of {0} recovered", rows.table());
                    failing = false;
                }
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
                // A failure repeats every round while the broker or the database is down: one warning per outage.
                LOG.log(failing ? Level.DEBUG : Level.WARNING, "outbox relay of {0} failed, retrying every {1} ms (the rows wait): {2}",
                        rows.table(), errorBackoff.toMillis(), e.toString());
                failing = true;
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

    /** Stops the relay: the batch in flight finishes or is rolled back; the rows not relayed wait for the next relay. */
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
        binomic.removeOutboxMonitor(monitor);
        dropWakeups();
        t.interrupt();
        try {
            t.join(Duration.ofSeconds(10));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Builds an {@link OutboxRelay}. */
    public static final class Builder {
        private final Binomic binomic;
        private final DataSource dataSource;
        private String table = Outbox.DEFAULT_TABLE;
        private int batchSize = 500;
        private Duration pollInterval = Duration.ofSeconds(1);
        private boolean listen = true;
        private Duration idWindow = Duration.ofHours(1);
        private Duration errorBackoff = Duration.ofSeconds(1);

        private Builder(Binomic binomic, DataSource dataSource) {
            this.binomic = Objects.requireNonNull(binomic, "binomic must not be null");
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
