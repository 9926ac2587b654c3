package io.binomic.core.internal.worker;

import io.binomic.api.BrokerException;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.DueTimes;
import io.binomic.core.internal.jobs.JobRecordFormat;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The RUNNING marks of tracked jobs, written before their handlers run, and the marks the broker
 * did not confirm. A tracked handler runs only once its record says RUNNING: a cancel finding any
 * other state ends the job at once, as one that has not started, and interrupts nobody. So a job
 * whose mark the broker did not confirm (it may still write it) is put back, attempt unchanged,
 * and fetched again shortly; its retry's start finds a cancel that came meanwhile. A broker that
 * refuses one job's mark {@value #TRIES} times in a row has that counted as a failed attempt.
 */
final class StartMarks {
    /** The processor's logger: these lines are part of how a delivery ends, where an operator filters them. */
    private static final System.Logger LOG = System.getLogger(DeliveryProcessor.class.getName());
    /** How long a tracked job whose start mark the broker did not confirm waits before it is fetched again. */
    static final Duration RETRY_DELAY = Duration.ofMillis(500);
    /**
     * How many start marks of one job in a row this worker lets fail before it counts them as a failed
     * attempt. A broker that answers the put-back but refuses the mark every time (a script error, a
     * permission missing from the worker's ACL user) would otherwise put the job back every
     * {@link #RETRY_DELAY} for ever; an outage does not get here, as the put-back fails too.
     */
    static final int TRIES = 20;
    /** Past this many jobs counted at once, the counts restart: jobs put back in an outage that another worker ran. */
    private static final int MAX_COUNTED = 10_000;

    private final JobTracking tracking;
    private final Clock clock;
    private final RunSettlements settlements;
    /** The processor's count of failed attempts. */
    private final LongAdder failed;
    /** Jobs whose start marks failed here, and how many times in a row; empty but in an outage or a broken broker. */
    private final Map<UUID, Integer> failures = new ConcurrentHashMap<>();

    StartMarks(JobTracking tracking, Clock clock, RunSettlements settlements, LongAdder failed) {
        this.tracking = tracking;
        this.clock = clock;
        this.settlements = settlements;
        this.failed = failed;
    }

    /** Writes the RUNNING record of {@code run}: null when the job may run, else how its delivery ends unrun. */
    Outcome start(DeliveryProcessor.Run run) {
        run.started = clock.instant();
        boolean mayRun;
        try {
            mayRun = tracking.start(JobRecordFormat.started(run.message, run.delivery.queue(), run.attempt, tracking.worker(), run.started));
        } catch (BrokerException e) {
            return refused(run, e);
        }
        if (!failures.isEmpty()) {
            failures.remove(run.message.id());
        }
        if (!mayRun) {
            LOG.log(Level.INFO, "job {0} of task {1} was cancelled (or has ended) before it ran; not running it", run.message.id(),
                    run.message.task());
            return new Outcome.Settle(new Settlement.Ack(run.delivery));
        }
        return null;
    }

    private Outcome refused(DeliveryProcessor.Run run, BrokerException e) {
        if (failures.size() >= MAX_COUNTED) {
            failures.clear(); // a count restarts, nothing more
        }
        int times = failures.merge(run.message.id(), 1, Integer::sum);
        if (times >= TRIES) {
            failures.remove(run.message.id());
            LOG.log(Level.ERROR, "could not mark job {0} of task {1} running {2} times in a row ({3}); counting it as a failed attempt",
                    run.message.id(), run.message.task(), times, e.getMessage());
            failed.increment();
            return settlements.failure(run, DeliveryProcessor.START_MARK_FAILED, "the broker refused to mark the job running " + times
                    + " times in a row; the last time: " + e.getMessage(), "");
        }
        LOG.log(times == 1 ? Level.WARNING : Level.DEBUG, "could not mark job {0} running ({1}); putting it back, to run once it"
                + " is marked", run.message.id(), e.getMessage());
        // the attempt this delivery is (one more per reclaim), and the enqueue time a staleAfter check reads
        Message next = run.message.attempt() == run.attempt ? run.message
                : run.message.withAttempt(run.attempt, run.message.enqueuedAt());
        Instant due = DueTimes.notBefore(run.started.plus(RETRY_DELAY));
        return new Outcome.Settle(new Settlement.RetryLater(run.delivery, next, due));
    }
}
