package io.binomic.core.internal.worker;

import io.binomic.api.BrokerException;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.DueTimes;
import io.binomic.core.internal.jobs.JobRecordFormat;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.LongAdder;

/**
 * The broker reads a handler makes through its {@code TaskContext} (its dependencies' results, its
 * batch's status), and the runs they failed. A read the broker did not answer (Redis down, a dropped
 * connection) throws a {@link BrokerException} in the handler; when that exception is what ends the
 * handler, the job did not fail, the broker did, so the attempt is not counted: the delivery is put
 * back, attempt unchanged, due after {@link StartMarks#RETRY_DELAY}, as a job whose start mark was
 * not confirmed is. In an outage that put-back is held with the worker's other outcomes and written
 * once the broker answers. A handler that catches the exception and fails otherwise, or wraps it in
 * an exception of its own, has failed its attempt as it chose. A broker that answers the put-back but
 * refuses one job's reads {@value StartMarks#TRIES} times in a row (a permission missing from the
 * worker's ACL user) has the last one counted as a failed attempt, as for start marks.
 */
final class HandlerReads {
    /** The processor's logger: these lines are part of how a delivery ends, where an operator filters them. */
    private static final System.Logger LOG = System.getLogger(DeliveryProcessor.class.getName());
    /** Past this many jobs counted at once, the counts restart: jobs put back in an outage that another worker ran. */
    private static final int MAX_COUNTED = 10_000;

    private final Clock clock;
    private final RunSettlements settlements;
    /** The processor's count of failed attempts. */
    private final LongAdder failed;
    /** Jobs put back here for a failed read, and how many times in a row; empty but in an outage or a broken broker. */
    private final Map<UUID, Integer> failures = new ConcurrentHashMap<>();

    HandlerReads(Clock clock, RunSettlements settlements, LongAdder failed) {
        this.clock = clock;
        this.settlements = settlements;
        this.failed = failed;
    }

    /**
     * True when {@code thrown}, what ended the handler of {@code run}, is the failure of a read it
     * made through its context: that very exception, or it carried by the wrappers of a future the
     * handler joined.
     */
    static boolean endedByRead(DeliveryProcessor.Run run, Throwable thrown) {
        BrokerException read = run.readFailed;
        if (read == null) {
            return false;
        }
        for (Throwable t = thrown; t != null; t = t.getCause()) {
            if (t == read) {
                return true;
            }
            if (!(t instanceof CompletionException || t instanceof ExecutionException)) {
                return false;
            }
        }
        return false;
    }

    /** How {@code run}, ended by the failure of a read made for it, ends: put back, attempt unchanged; or failed, past the tries. */
    Outcome putBack(DeliveryProcessor.Run run) {
        BrokerException e = run.readFailed;
        if (failures.size() >= MAX_COUNTED) {
            failures.clear(); // a count restarts, nothing more
        }
        int times = failures.merge(run.message.id(), 1, Integer::sum);
        if (times >= StartMarks.TRIES) {
            failures.remove(run.message.id());
            LOG.log(Level.ERROR, "the broker failed the reads of job {0} of task {1} {2} times in a row ({3}); counting it as a failed"
                    + " attempt", run.message.id(), run.message.task(), times, e.getMessage());
            failed.increment();
            return settlements.failure(run, e.getClass().getName(), e.getMessage(), RunSettlements.stackHead(e));
        }
        LOG.log(times == 1 ? Level.WARNING : Level.DEBUG, "task {0} (message {1}): the broker did not answer a read its handler made"
                + " through TaskContext ({2}); not counted as a failure: put back, attempt {3} unchanged, to run again once the"
                + " broker answers", run.message.task(), run.message.id(), e.getMessage(), run.attempt);
        run.attemptNotSpent = true;
        Instant now = clock.instant();
        Message next = run.message.attempt() == run.attempt ? run.message : run.message.withAttempt(run.attempt, run.message.enqueuedAt());
        Instant due = DueTimes.notBefore(now.plus(StartMarks.RETRY_DELAY));
        var job = run.tracked() ? JobRecordFormat.givenBack(run.message, run.delivery.queue(), due) : null;
        return new Outcome.Settle(new Settlement.RetryLater(run.delivery, next, due, job));
    }

    /** {@code run} ended otherwise: a count of its reads' failures in a row restarts. */
    void ended(DeliveryProcessor.Run run) {
        if (!failures.isEmpty()) {
            failures.remove(run.message.id());
        }
    }
}
