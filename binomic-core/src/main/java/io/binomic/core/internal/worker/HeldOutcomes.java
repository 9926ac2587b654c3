package io.binomic.core.internal.worker;

import io.binomic.api.JobState;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.Settlement;

/**
 * A worker's outcomes not yet written to the broker (held while it is unreachable), by what they will count as once
 * written: a success, a retry, a dead letter; an ack of a cancelled job is none of these.
 */
final class HeldOutcomes {
    long total;
    long succeeded;
    long retried;
    long deadLettered;

    /** Counts {@code s} in ({@code sign} 1) or out ({@code sign} -1). */
    void add(Settlement s, int sign) {
        total += sign;
        switch (s) {
            case Settlement.Ack a when a.job() == null
                    || JobState.SUCCEEDED.name().equals(a.job().set().get(JobRecords.STATE)) -> succeeded += sign;
            case Settlement.Ack _ -> { }
            case Settlement.RetryLater _ -> retried += sign;
            case Settlement.DeadLetter _ -> deadLettered += sign;
        }
    }

    /** Counts none. */
    void clear() {
        total = 0;
        succeeded = 0;
        retried = 0;
        deadLettered = 0;
    }

    HeldOutcomes copy() {
        HeldOutcomes copy = new HeldOutcomes();
        copy.total = total;
        copy.succeeded = succeeded;
        copy.retried = retried;
        copy.deadLettered = deadLettered;
        return copy;
    }
}
