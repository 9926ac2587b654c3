package io.binomic.it;

import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.jdbc.Outbox;
import java.sql.Connection;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * An application in its own JVM that runs no relay: it commits {@code count} jobs of the ledger's
 * task, one transaction each, printing {@code COMMITTED <job id>} after each commit, then writes
 * one more job in a transaction it never commits, prints {@code OPEN <job id>} and waits for the
 * test's SIGKILL. Arguments: the Redis URL, the JDBC URL, the queue and the count.
 */
public final class OutboxAppChild {
    private OutboxAppChild() { }

    public static void main(String[] args) throws Exception {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(args[0]).schedulePeriodicTasks(false).build();
        Task<OutboxIT.Item, Void> task = Task.builder("ledger", OutboxIT.Item.class).queue(args[2]).build();
        PGSimpleDataSource dataSource = new PGSimpleDataSource();
        dataSource.setURL(args[1]);
        Binomic binomic = Binomic.builder().config(config).task(task).build().start();
        Outbox outbox = Outbox.of(binomic);
        System.out.println("WORKER READY");
        int count = Integer.parseInt(args[3]);
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            for (int n = 0; n < count; n++) {
                var job = outbox.submit(c, task, new OutboxIT.Item(n));
                c.commit();
                System.out.println("COMMITTED " + job.id());
            }
            var open = outbox.submit(c, task, new OutboxIT.Item(count));
            System.out.println("OPEN " + open.id());
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
