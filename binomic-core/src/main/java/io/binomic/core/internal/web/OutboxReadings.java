package io.binomic.core.internal.web;

import io.binomic.core.OutboxMonitor;
import io.binomic.core.OutboxMonitor.Reading;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * The outboxes a client's relays registered, read for one scrape or page: their rows waiting and
 * oldest age, as {@code /metrics} series and as the overview's table. Relays of one table in one
 * process are one outbox (one read, their counts added), so a series is never repeated.
 */
final class OutboxReadings {
    /** Shorter than the broker's deadline, so that a database that hangs still leaves the page or scrape its broker queries. */
    static final Duration LIMIT = Duration.ofSeconds(2);

    /** One outbox: its reading, or why there is none. */
    record Outbox(String table, Reading reading, String error) { }

    private OutboxReadings() { }

    /** Reads each table once, each within {@link #LIMIT}. */
    static List<Outbox> read(List<OutboxMonitor> monitors) {
        Map<String, List<OutboxMonitor>> byTable = new LinkedHashMap<>();
        monitors.forEach(m -> byTable.computeIfAbsent(m.table(), t -> new ArrayList<>()).add(m));
        List<Outbox> all = new ArrayList<>();
        for (Map.Entry<String, List<OutboxMonitor>> e : byTable.entrySet()) {
            try {
                all.add(BrokerDeadline.within(LIMIT, () -> read(e.getKey(), e.getValue())));
            } catch (TimeoutException timeout) {
                all.add(new Outbox(e.getKey(), null, "the database did not answer within " + LIMIT.toSeconds() + " s"));
            } catch (RuntimeException failed) {
                all.add(new Outbox(e.getKey(), null, String.valueOf(failed.getMessage())));
            }
        }
        return all;
    }

    private static Outbox read(String table, List<OutboxMonitor> relays) {
        Reading first = null;
        long relayed = 0;
        long duplicates = 0;
        long failures = 0;
        try {
            for (OutboxMonitor m : relays) {
                Reading r = m.read();
                first = first == null ? r : first;
                relayed += r.relayed();
                duplicates += r.duplicates();
                failures += r.failures();
            }
        } catch (Exception e) {
            return new Outbox(table, null, e.getMessage() == null ? e.toString() : e.getMessage());
        }
        return new Outbox(table, new Reading(first.waiting(), first.oldestAge(), relayed, duplicates, failures, first.setAside()), null);
    }

    /** The series of {@code outboxes}; nothing when there is none, so a client without an outbox shows no empty families. */
    static void metrics(PrometheusText p, List<Outbox> outboxes) {
        if (outboxes.isEmpty()) {
            return;
        }
        p.family("binomic_outbox_up", "gauge", "1 when the outbox table was read within 2 s for this scrape.");
        p.family("binomic_outbox_waiting", "gauge", "Outbox rows committed and not yet relayed into the broker.");
        p.family("binomic_outbox_oldest_age_seconds", "gauge", "Age of the oldest outbox row not yet relayed; 0 when none waits.");
        p.family("binomic_outbox_relayed_total", "counter", "Jobs the relays of this process stored in the broker (duplicates apart).");
        p.family("binomic_outbox_relay_failures_total", "counter", "Failed rounds of the relays of this process (the broker or the database down).");
        p.family("binomic_outbox_duplicates_total", "counter", "Outbox rows the relays of this process found in the broker already (deleted, nothing stored).");
        p.family("binomic_outbox_set_aside", "gauge", "Outbox rows set aside because they cannot be relayed (their failure column says why).");
        for (Outbox o : outboxes) {
            p.sample("binomic_outbox_up", o.reading() == null ? 0 : 1, "table", o.table());
            if (o.reading() != null) {
                Reading r = o.reading();
                p.sample("binomic_outbox_waiting", r.waiting(), "table", o.table());
                p.sample("binomic_outbox_oldest_age_seconds", r.oldestAge().toMillis() / 1000.0, "table", o.table());
                p.sample("binomic_outbox_relayed_total", r.relayed(), "table", o.table());
                p.sample("binomic_outbox_relay_failures_total", r.failures(), "table", o.table());
                p.sample("binomic_outbox_duplicates_total", r.duplicates(), "table", o.table());
                p.sample("binomic_outbox_set_aside", r.setAside(), "table", o.table());
            }
        }
    }

    /** The overview's section; nothing when there is no outbox. */
    static void section(Html h, List<Outbox> outboxes) {
        if (outboxes.isEmpty()) {
            return;
        }
        h.raw("<section><h2>Transactional outbox</h2><table id=\"outbox\" data-live=\"5000\">")
                .head("table", "waiting", "oldest", "relayed", "duplicates", "relay failures", "set aside").raw("<tbody>");
        for (Outbox o : outboxes) {
            Reading r = o.reading();
            if (r == null) {
                h.raw("<tr class=\"error\" data-table=\"").text(o.table()).raw("\"><td>").text(o.table()).raw("</td><td colspan=\"6\">")
                        .text("cannot read the table: " + o.error()).raw("</td></tr>\n");
            } else {
                h.raw("<tr data-table=\"").text(o.table()).raw("\"><td>").text(o.table()).raw("</td><td class=\"waiting\">")
                        .text(r.waiting()).raw("</td><td class=\"oldest\">")
                        .text(String.format(Locale.ROOT, "%.1f s", r.oldestAge().toMillis() / 1000.0)).raw("</td><td>")
                        .text(r.relayed()).raw("</td><td>").text(r.duplicates()).raw("</td><td>").text(r.failures())
                        .raw("</td><td class=\"set-aside\">").text(r.setAside()).raw("</td></tr>\n");
            }
        }
        h.raw("</tbody></table><p class=\"hint\">Rows committed by Outbox.submit that no relay has stored in the broker yet: a"
                + " growing oldest age means no relay runs, or it cannot reach the broker or the database.</p></section>");
    }
}
