package io.binomic.core;

import java.time.Duration;

/**
 * A transactional outbox as its operators see it: rows waiting for a relay and the age of the
 * oldest. binomic-jdbc's relay registers one with its client when it starts
 * ({@link Binomic#addOutboxMonitor}), and the client's {@code /metrics} and dashboard overview then
 * show the outbox; the core itself reads no database.
 */
public interface OutboxMonitor {

    /** The outbox table: the {@code table} label of its series. */
    String table();

    /**
     * Reads the table now. It may wait on the database: {@code /metrics} and the dashboard give it
     * two seconds, then report the outbox as unreadable.
     *
     * @throws Exception when the table cannot be read (the database is down, the table is missing)
     */
    Reading read() throws Exception;

    /**
     * One reading of an outbox.
     *
     * @param waiting rows committed and not yet relayed
     * @param oldestAge how long ago the oldest waiting row was written; zero when none waits
     * @param relayed jobs the registering relay stored in the broker since it started
     * @param duplicates rows that relay found stored already (relayed again after a relay died before deleting them), or
     *                   duplicates of a unique job: deleted, nothing stored
     * @param failures failed rounds of that relay (the broker or the database down)
     * @param setAside rows set aside because they cannot be relayed (their failure column says why); they wait for an operator
     */
    record Reading(long waiting, Duration oldestAge, long relayed, long duplicates, long failures, long setAside) {
        /** A reading without duplicates or rows set aside. */
        public Reading(long waiting, Duration oldestAge, long relayed, long failures) { this(waiting, oldestAge, relayed, 0, failures, 0); }
    }
}
