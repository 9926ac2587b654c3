package io.binomic.api.spi;

import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * What {@link Broker#settle} did not apply, and why. Both kinds are no-ops: nothing changed.
 *
 * @param reclaimed settlements of deliveries that are pending under another consumer: another
 *        worker took them over after this one stopped renewing the lease (stale outcomes)
 * @param notPending settlements of deliveries that are no longer pending at all: settled already,
 *        by the worker that took them over, or by an earlier send of the same settlement whose reply
 *        was lost
 * @param handed new deliveries the broker handed this consumer with the settle, already admitted onto
 *        the concurrency slots the settlements freed ({@link Broker#settle(String, List, java.util.Map)}); pending
 *        under the consumer like fetched ones, for it to run
 */
public record SettleReport(List<Settlement> reclaimed, List<Settlement> notPending, List<Delivery> handed) {

    /** Every settlement was applied. */
    public static final SettleReport ALL_APPLIED = new SettleReport(List.of(), List.of());

    public SettleReport {
        reclaimed = List.copyOf(Objects.requireNonNull(reclaimed, "reclaimed"));
        notPending = List.copyOf(Objects.requireNonNull(notPending, "notPending"));
        handed = List.copyOf(Objects.requireNonNull(handed, "handed"));
    }

    /** A report that hands out nothing. */
    public SettleReport(List<Settlement> reclaimed, List<Settlement> notPending) {
        this(reclaimed, notPending, List.of());
    }

    /** Every settlement that was not applied, of both kinds. */
    public List<Settlement> notApplied() {
        return notPending.isEmpty() ? reclaimed : Stream.concat(reclaimed.stream(), notPending.stream()).toList();
    }

    /** True when every settlement was applied. */
    public boolean allApplied() { return reclaimed.isEmpty() && notPending.isEmpty(); }

    /** This report with {@code more} handed out too. */
    public SettleReport withHanded(List<Delivery> more) {
        if (more.isEmpty()) {
            return this;
        }
        return new SettleReport(reclaimed, notPending, Stream.concat(handed.stream(), more.stream()).toList());
    }
}
