package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.core.internal.web.Promtool;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An outbox registered with a client shows on its {@code /metrics} (promtool-valid, one series per
 * table whatever the number of relays) and on the dashboard's overview; one that cannot be read
 * shows as down without holding up the scrape; a client without one shows nothing of it.
 */
class DashboardOutboxTest {
    private final Binomic binomic = Binomic.builder().build().start();
    private final CountDownLatch never = new CountDownLatch(1);

    @AfterEach
    void close() {
        never.countDown();
        binomic.close();
    }

    /** A relay's view of a table, as binomic-jdbc's relay registers it. */
    private record Table(String table, Callable<OutboxMonitor.Reading> reader) implements OutboxMonitor {
        @Override
        public Reading read() throws Exception {
            return reader.call();
        }
    }

    private String metrics(Dashboard dashboard) throws Exception {
        String response = DashboardMetricsTest.get(dashboard.uri().resolve("metrics"), null);
        assertTrue(response.startsWith("200 "), response);
        return response.substring(4);
    }

    @Test
    void registeredOutboxShowsItsWaitingRowsAndOldestAgeOnMetricsAndTheOverview() throws Exception {
        OutboxMonitor first = new Table("binomic_outbox", () -> new OutboxMonitor.Reading(3, Duration.ofMillis(1500), 120, 2));
        OutboxMonitor second = new Table("binomic_outbox", () -> new OutboxMonitor.Reading(3, Duration.ofMillis(1500), 30, 1));
        binomic.addOutboxMonitor(first);
        binomic.addOutboxMonitor(second);
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            String text = metrics(dashboard);
            for (String line : List.of(
                    "binomic_outbox_up{table=\"binomic_outbox\"} 1",
                    "binomic_outbox_waiting{table=\"binomic_outbox\"} 3",
                    "binomic_outbox_oldest_age_seconds{table=\"binomic_outbox\"} 1.5",
                    "binomic_outbox_relayed_total{table=\"binomic_outbox\"} 150",
                    "binomic_outbox_relay_failures_total{table=\"binomic_outbox\"} 3")) {
                assertTrue(text.lines().anyMatch(line::equals), "missing line " + line + " in\n" + text);
            }
            assertEquals(1, text.lines().filter(l -> l.startsWith("binomic_outbox_waiting{")).count(), "two relays of one table: one series");
            Promtool.assertValid(text);

            String overview = DashboardMetricsTest.get(dashboard.uri(), null);
            assertTrue(overview.contains("<table id=\"outbox\""), overview);
            assertTrue(overview.contains("<td class=\"waiting\">3</td><td class=\"oldest\">1.5 s</td>"), overview);

            binomic.removeOutboxMonitor(first);
            binomic.removeOutboxMonitor(second);
            assertFalse(metrics(dashboard).contains("binomic_outbox"), "an outbox whose relays stopped still shows");
            assertFalse(DashboardMetricsTest.get(dashboard.uri(), null).contains("id=\"outbox\""));
        }
    }

    @Test
    void duplicatesAreCountedApartFromRelayedJobsAndRowsSetAsideShow() throws Exception {
        OutboxMonitor first = new Table("binomic_outbox", () -> new OutboxMonitor.Reading(0, Duration.ZERO, 120, 7, 2, 4));
        OutboxMonitor second = new Table("binomic_outbox", () -> new OutboxMonitor.Reading(0, Duration.ZERO, 30, 5, 1, 4));
        binomic.addOutboxMonitor(first);
        binomic.addOutboxMonitor(second);
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            String text = metrics(dashboard);
            for (String line : List.of(
                    "binomic_outbox_relayed_total{table=\"binomic_outbox\"} 150",
                    "binomic_outbox_duplicates_total{table=\"binomic_outbox\"} 12",
                    "binomic_outbox_set_aside{table=\"binomic_outbox\"} 4")) {
                assertTrue(text.lines().anyMatch(line::equals), "missing line " + line + " in\n" + text);
            }
            Promtool.assertValid(text);
            assertTrue(DashboardMetricsTest.get(dashboard.uri(), null).contains("<td class=\"set-aside\">4</td>"));
        } finally {
            binomic.removeOutboxMonitor(first);
            binomic.removeOutboxMonitor(second);
        }
    }

    @Test
    void outboxThatCannotBeReadShowsDownAndOneThatHangsDoesNotHoldTheScrape() throws Exception {
        binomic.addOutboxMonitor(new Table("app.broken_outbox", () -> {
            throw new IOException("relation \"app.broken_outbox\" does not exist");
        }));
        binomic.addOutboxMonitor(new Table("hanging_outbox", () -> {
            never.await();
            throw new IllegalStateException("released at the end of the test");
        }));
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            String text = metrics(dashboard);
            assertTrue(text.lines().anyMatch("binomic_outbox_up{table=\"app.broken_outbox\"} 0"::equals), text);
            assertTrue(text.lines().anyMatch("binomic_outbox_up{table=\"hanging_outbox\"} 0"::equals), text);
            assertFalse(text.contains("binomic_outbox_waiting{"), "no rows count for a table nobody could read: " + text);
            assertTrue(text.lines().anyMatch("binomic_broker_up 1"::equals), "the broker's series stay: " + text);
            Promtool.assertValid(text);

            String overview = DashboardMetricsTest.get(dashboard.uri(), null);
            assertTrue(overview.contains("cannot read the table: relation &quot;app.broken_outbox&quot; does not exist"), overview);
            assertTrue(overview.contains("cannot read the table: the database did not answer within 2 s"), overview);
        }
    }

    @Test
    void clientWithoutAnOutboxShowsNothingOfIt() throws Exception {
        try (Dashboard dashboard = binomic.dashboard().port(0).start()) {
            assertFalse(metrics(dashboard).contains("outbox"));
            assertFalse(DashboardMetricsTest.get(dashboard.uri(), null).contains("outbox"));
        }
    }
}
