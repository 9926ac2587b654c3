package io.binomic.bench;

import io.binomic.api.BinomicConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.jdbc.Outbox;
import io.binomic.jdbc.OutboxRelay;
import io.binomic.testsupport.PostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The transactional outbox ({@code -Dbench.only=outbox}) against a PostgreSQL of its own: submit
 * throughput inside transactions (one job per transaction, and 100 per transaction in one batch),
 * the relay's rate on a full table, and commit-to-start latency at {@code bench.outboxRate} jobs/s
 * (default 1,000) with LISTEN/NOTIFY and with polling every {@code bench.outboxPollMs} (default
 * 100), next to a plain submit at the same rate, in the same run.
 */
final class BenchOutbox {
    private static final int JOBS = Integer.getInteger("bench.outboxJobs", 20_000);
    private static final int RATE = Integer.getInteger("bench.outboxRate", 1_000);
    private static final int LATENCY_SECONDS = Integer.getInteger("bench.outboxSeconds", 5);
    private static final long POLL_MS = Long.getLong("bench.outboxPollMs", 100);

    private BenchOutbox() { }

    static void measure(BenchRedis redis, String queue, Map<String, Double> r) throws Exception {
        Map<UUID, Long> started = new ConcurrentHashMap<>();
        Task<Long, Void> task = Task.builder("outbox-noop", Long.class).queue(queue).build();
        BinomicConfig config = BinomicConfig.builder().brokerUrl(redis.url())
                .worker(WorkerConfig.builder().queues(queue).concurrency(200).build()).build();
        try (PostgresServer postgres = PostgresServer.startNew();
             Binomic client = Binomic.builder().config(config).handle(task, n -> {
                 started.put(TaskContext.current().messageId(), System.nanoTime());
                 return null;
             }).build().start()) {
            PGSimpleDataSource dataSource = new PGSimpleDataSource();
            dataSource.setURL(postgres.jdbcUrl());
            try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
                s.execute(Outbox.schemaSql());
            }
            Outbox outbox = Outbox.of(client);

            // Submit throughput, no relay running: the rows stay for the relay-rate measure.
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                int single = JOBS / 10;
                long t0 = System.nanoTime();
                for (int i = 0; i < single; i++) {
                    outbox.submit(c, task, (long) i);
                    c.commit();
                }
                r.put("outbox_submit_1_per_tx_jobs_per_s", single / ((System.nanoTime() - t0) / 1e9));
                List<Long> hundred = Collections.nCopies(100, 0L);
                t0 = System.nanoTime();
                for (int sent = 0; sent < JOBS; sent += hundred.size()) {
                    outbox.submitAll(c, task, hundred, SubmitOptions.NONE);
                    c.commit();
                }
                r.put("outbox_submit_100_per_tx_jobs_per_s", JOBS / ((System.nanoTime() - t0) / 1e9));
                int total = single + JOBS;
                t0 = System.nanoTime();
                try (OutboxRelay relay = OutboxRelay.builder(client, dataSource).build().start()) {
                    while (relay.relayed() < total) {
                        Thread.sleep(5);
                    }
                }
                r.put("outbox_relay_rows_per_s", total / ((System.nanoTime() - t0) / 1e9));
            }
            client.startWorker();
            awaitQuiet(client, queue);

            // One producer connection, as an application's pool would lend: a new connection per commit would measure the login.
            try (Connection producer = dataSource.getConnection()) {
                producer.setAutoCommit(false);
                started.clear();
                try (OutboxRelay relay = OutboxRelay.builder(client, dataSource).build().start()) {
                    latency(r, "outbox_notify", started, id -> commitOne(producer, outbox, task));
                    r.put("outbox_notify_listening", relay.listening() ? 1.0 : 0.0);
                }
                started.clear();
                try (OutboxRelay relay = OutboxRelay.builder(client, dataSource).listen(false)
                        .pollInterval(Duration.ofMillis(POLL_MS)).build().start()) {
                    latency(r, "outbox_poll" + POLL_MS + "ms", started, id -> commitOne(producer, outbox, task));
                    r.put("outbox_poll_relayed", (double) relay.relayed());
                }
            }
            started.clear();
            latency(r, "plain_submit", started, id -> client.submit(task, 0L).id());
        }
    }

    /** One job per transaction, as an application's request would commit it. */
    private static UUID commitOne(Connection c, Outbox outbox, Task<Long, Void> task) {
        try {
            JobHandle<Void> job = outbox.submit(c, task, 0L);
            c.commit();
            return job.id();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private interface Submit {
        UUID next(int i);
    }

    /** Submits at {@link #RATE}/s for {@link #LATENCY_SECONDS} s; p50 and p99 of commit (or submit) to handler start, in ms. */
    private static void latency(Map<String, Double> r, String name, Map<UUID, Long> started, Submit submit) throws InterruptedException {
        int count = RATE * LATENCY_SECONDS;
        Map<UUID, Long> committed = new ConcurrentHashMap<>();
        long interval = 1_000_000_000L / RATE;
        long first = System.nanoTime();
        long next = first;
        for (int i = 0; i < count; i++) {
            long wait = next - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            long before = System.nanoTime();
            committed.put(submit.next(i), before);
            next += interval;
        }
        // The rate reached: a producer slower than RATE (a loaded machine, one commit at a time) measures a lower load.
        r.put(name + "_submits_per_s", count / ((System.nanoTime() - first) / 1e9));
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!started.keySet().containsAll(committed.keySet()) && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        double[] ms = committed.entrySet().stream().filter(e -> started.containsKey(e.getKey()))
                .mapToDouble(e -> (started.get(e.getKey()) - e.getValue()) / 1e6).sorted().toArray();
        r.put(name + "_jobs", (double) ms.length);
        r.put(name + "_p50_ms", ms.length == 0 ? Double.NaN : ms[(int) (ms.length * 0.50)]);
        r.put(name + "_p99_ms", ms.length == 0 ? Double.NaN : ms[Math.min(ms.length - 1, (int) (ms.length * 0.99))]);
        r.put(name + "_max_ms", ms.length == 0 ? Double.NaN : Arrays.stream(ms).max().orElse(Double.NaN));
    }

    private static void awaitQuiet(Binomic client, String queue) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (System.nanoTime() < deadline) {
            var stats = client.queueStats(queue);
            if (stats.ready() == 0 && stats.pending() == 0) {
                return;
            }
            Thread.sleep(50);
        }
    }
}
