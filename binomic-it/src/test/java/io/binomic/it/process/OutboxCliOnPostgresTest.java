package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.jdbc.Outbox;
import io.binomic.testsupport.PostgresServer;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code binomic outbox} finds binomic-jdbc on the path and reports the rows waiting in a real PostgreSQL. */
class OutboxCliOnPostgresTest {

    @Test
    void outboxShowsTheRowsWaitingAndTheOldestAgeWithItsMetrics() throws Exception {
        Task<String, Void> task = Task.builder("cli-outbox", String.class).queue("cli-outbox").build();
        try (PostgresServer postgres = PostgresServer.startNew(); Binomic binomic = Binomic.builder().task(task).build().start()) {
            try (Connection c = postgres.connect(); Statement s = c.createStatement()) {
                s.execute(Outbox.schemaSql());
                c.setAutoCommit(false);
                Outbox.of(binomic).submitAll(c, task, List.of("a", "b", "c"), SubmitOptions.NONE);
                c.commit();
            }
            CliRun run = CliRun.of("outbox", "--jdbc", postgres.jdbcUrl());
            assertEquals(0, run.exit(), run.toString());
            String[] lines = run.out().split("\n");
            assertTrue(lines[0].matches("binomic_outbox: 3 waiting, oldest \\d+\\.\\d s, 0 set aside"), lines[0]);
            assertEquals("binomic_outbox_waiting{table=\"binomic_outbox\"} 3", lines[1]);
            assertTrue(lines[2].startsWith("binomic_outbox_oldest_age_seconds{table=\"binomic_outbox\"} "), lines[2]);

            CliRun missing = CliRun.of("outbox", "--jdbc", postgres.jdbcUrl(), "--table", "no_such_outbox");
            assertEquals(1, missing.exit(), missing.toString());
            assertTrue(missing.err().startsWith("binomic outbox: cannot read the outbox table no_such_outbox"), missing.err());
        }
    }
}
