package io.binomic.jdbc;

import java.time.Duration;
import java.util.Locale;

/**
 * The state of an outbox table for operators: rows waiting for the relay and the age of the
 * oldest (a relay that falls behind or stopped shows as a growing age), with one relay's counts.
 *
 * @param table the outbox table
 * @param waiting rows not yet relayed (committed ones; rows of open transactions are counted by the database as it sees them)
 * @param oldestAge how long ago the oldest waiting row was written; zero when none waits
 * @param relayed rows the relay answering moved into the broker since it started
 * @param failures failed rounds of that relay (the broker or the database down)
 * @param listening whether that relay waits on PostgreSQL's LISTEN (false: it polls)
 */
public record OutboxStats(String table, long waiting, Duration oldestAge, long relayed, long failures, boolean listening) {

    /** One line for a terminal: {@code binomic_outbox: 3 waiting, oldest 1.2 s; relayed 120, 0 failures, LISTEN}. */
    public String summary() {
        return String.format(Locale.ROOT, "%s: %d waiting, oldest %.1f s; relayed %d, %d failures, %s", table, waiting,
                oldestAge.toMillis() / 1000.0, relayed, failures, listening ? "LISTEN" : "polling");
    }

    /** The same in the Prometheus text format, for a {@code /metrics} page. */
    public String metrics() {
        String label = "{table=\"" + table + "\"}";
        return "# HELP binomic_outbox_waiting Outbox rows not yet relayed into the broker.\n"
                + "# TYPE binomic_outbox_waiting gauge\n"
                + "binomic_outbox_waiting" + label + " " + waiting + "\n"
                + "# HELP binomic_outbox_oldest_age_seconds Age of the oldest outbox row not yet relayed.\n"
                + "# TYPE binomic_outbox_oldest_age_seconds gauge\n"
                + "binomic_outbox_oldest_age_seconds" + label + " " + String.format(Locale.ROOT, "%.3f", oldestAge.toMillis() / 1000.0) + "\n"
                + "# HELP binomic_outbox_relayed_total Outbox rows this relay moved into the broker.\n"
                + "# TYPE binomic_outbox_relayed_total counter\n"
                + "binomic_outbox_relayed_total" + label + " " + relayed + "\n"
                + "# HELP binomic_outbox_relay_failures_total Failed rounds of this relay.\n"
                + "# TYPE binomic_outbox_relay_failures_total counter\n"
                + "binomic_outbox_relay_failures_total" + label + " " + failures + "\n";
    }
}
