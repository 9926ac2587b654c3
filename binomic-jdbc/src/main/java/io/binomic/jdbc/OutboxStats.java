package io.binomic.jdbc;

import java.time.Duration;
import java.util.Locale;

/**
 * The state of an outbox table for operators: rows waiting for the relay and the age of the
 * oldest (a relay that falls behind or stopped shows as a growing age), rows set aside, with one
 * relay's counts.
 *
 * @param table the outbox table
 * @param waiting rows not yet relayed (committed ones; rows of open transactions are counted by the database as it sees them)
 * @param oldestAge how long ago the oldest waiting row was written; zero when none waits
 * @param setAside rows the relays set aside because they cannot be read back into a job (their {@code failure} column says
 *                 why): they wait for an operator to fix and clear the column, or delete them
 * @param relay the counts of the relay answering
 */
public record OutboxStats(String table, long waiting, Duration oldestAge, long setAside, Counts relay) {

    /**
     * One relay's counts since it was built.
     *
     * @param relayed jobs it stored in the broker
     * @param duplicates rows it found stored already (relayed again after a relay died before deleting them), or duplicates
     *                   of a unique job: deleted, nothing stored
     * @param failures failed rounds (the broker or the database down)
     * @param listening whether it waits on PostgreSQL's LISTEN (false: it polls)
     */
    public record Counts(long relayed, long duplicates, long failures, boolean listening) { }

    /** One line for a terminal: {@code binomic_outbox: 3 waiting, oldest 1.2 s, 0 set aside; relayed 120, 0 duplicates, 0 failures, LISTEN}. */
    public String summary() {
        return String.format(Locale.ROOT, "%s: %d waiting, oldest %.1f s, %d set aside; relayed %d, %d duplicates, %d failures, %s", table,
                waiting, oldestAge.toMillis() / 1000.0, setAside, relay.relayed(), relay.duplicates(), relay.failures(),
                relay.listening() ? "LISTEN" : "polling");
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
                + "# HELP binomic_outbox_set_aside Outbox rows set aside because they cannot be relayed.\n"
                + "# TYPE binomic_outbox_set_aside gauge\n"
                + "binomic_outbox_set_aside" + label + " " + setAside + "\n"
                + "# HELP binomic_outbox_relayed_total Jobs this relay stored in the broker (duplicates apart).\n"
                + "# TYPE binomic_outbox_relayed_total counter\n"
                + "binomic_outbox_relayed_total" + label + " " + relay.relayed() + "\n"
                + "# HELP binomic_outbox_duplicates_total Outbox rows this relay found in the broker already.\n"
                + "# TYPE binomic_outbox_duplicates_total counter\n"
                + "binomic_outbox_duplicates_total" + label + " " + relay.duplicates() + "\n"
                + "# HELP binomic_outbox_relay_failures_total Failed rounds of this relay.\n"
                + "# TYPE binomic_outbox_relay_failures_total counter\n"
                + "binomic_outbox_relay_failures_total" + label + " " + relay.failures() + "\n";
    }
}
