package io.binomic.core.internal.worker;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.TaskDefaults;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.DueTimes;
import io.binomic.core.internal.StatsRecorder;
import io.binomic.core.internal.jobs.JobRecordFormat;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;
import java.util.random.RandomGenerator;
import java.util.stream.Collectors;

/**
 * The settlement of each way a run of {@link DeliveryProcessor} ends other than a success: a
 * cancel, a retry while the attempts last, a dead letter, or nothing at a worker's stop. The
 * processor decides which end a run had; this builds what the settler records for it (the job
 * record's update beside it) and counts it.
 */
final class RunSettlements {
    // Under the processor's name: one logger to filter for every outcome of a delivery.
    private static final System.Logger LOG = System.getLogger(DeliveryProcessor.class.getName());
    private static final int STACK_HEAD_LINES = 8;

    private final JobTracking tracking;
    private final TaskDefaults defaults;
    private final Clock clock;
    private final StatsRecorder stats;
    private final RandomGenerator random;
    private final String codecId;
    private final LongAdder retried;
    private final LongAdder deadLettered;

    RunSettlements(JobTracking tracking, TaskDefaults defaults, Clock clock, StatsRecorder stats, RandomGenerator random, String codecId,
                   LongAdder retried, LongAdder deadLettered) {
        this.tracking = tracking;
        this.defaults = defaults;
        this.clock = clock;
        this.stats = stats;
        this.random = random;
        this.codecId = codecId;
        this.retried = retried;
        this.deadLettered = deadLettered;
    }

    /**
     * The handler returned, but the codec cannot encode its result for the job record. Running it
     * again would only fail the same way (after another run of its side effects), so it is
     * dead-lettered at once, saying what to fix; left unsettled, it ran again after each lease and
     * ended as a lease expiry that hid the cause.
     */
    Outcome resultNotEncodable(DeliveryProcessor.Run run, Object result, Throwable e) {
        String problem = "the result of task '" + run.message.task() + "' (" + result.getClass().getName()
                + ") could not be encoded by codec '" + codecId + "': " + e.getClass().getName() + ": " + e.getMessage()
                + "; fix the codec or the task's result type";
        LOG.log(Level.ERROR, "task {0} (message {1}) returned, but {2}; dead-lettering", run.message.task(), run.message.id(), problem);
        return deadLetter(run, DeadLetterReason.NON_RETRYABLE, DeliveryProcessor.RESULT_NOT_ENCODABLE, problem, stackHead(e));
    }

    /**
     * A run the worker's stop cut off after its grace: put back, due now, its attempt unchanged (a deploy is not a failure
     * of the job), for a live worker to run at once. The stop's last write sends it; when that cannot be written (the
     * broker down), the delivery stays pending and a reclaim runs it, as its next attempt.
     */
    Outcome givenBackAtShutdown(DeliveryProcessor.Run run) {
        run.attemptNotSpent = true;
        Instant now = clock.instant();
        Message next = run.message.attempt() == run.attempt ? run.message : run.message.withAttempt(run.attempt, run.message.enqueuedAt());
        var job = run.tracked() ? JobRecordFormat.givenBack(run.message, run.delivery.queue(), now) : null;
        LOG.log(Level.INFO, "task {0} (message {1}) cancelled by worker shutdown; put back due now, attempt {2} unchanged",
                run.message.task(), run.message.id(), run.attempt);
        return new Outcome.Settle(new Settlement.RetryLater(run.delivery, next, now, job));
    }

    /** A run stopped because another worker took its delivery over: left to that worker, which settles it. */
    Outcome leaseLost(DeliveryProcessor.Run run) {
        LOG.log(Level.INFO, "task {0} (message {1}) stopped: another worker took it over after its lease lapsed, and runs it",
                run.message.task(), run.message.id());
        return new Outcome.LeavePending("lease lost");
    }

    Outcome cancelled(DeliveryProcessor.Run run, long startNanos) {
        stats.cancelled(run.delivery.queue(), run.message.task(), System.nanoTime() - startNanos);
        run.cancelled = true;
        LOG.log(Level.INFO, "task {0} (message {1}) was cancelled by request while it ran", run.message.task(), run.message.id());
        var update = JobRecordFormat.cancelled(run.message, run.delivery.queue(), run.attempt, tracking.worker(), run.started(),
                clock.instant());
        return new Outcome.Settle(new Settlement.Ack(run.delivery, update));
    }

    /** The retry path: another attempt after the backoff while the budget lasts, else the DLQ. */
    Outcome failure(DeliveryProcessor.Run run, String errorClass, String errorMessage, String stackHead) {
        Delivery delivery = run.delivery;
        Message message = run.message;
        if (run.attempt >= run.maxAttempts) {
            LOG.log(Level.ERROR, "task {0} (message {1}) failed attempt {2} of {3} with {4}: {5}; max attempts reached, dead-lettering",
                    message.task(), message.id(), run.attempt, run.maxAttempts, errorClass, errorMessage);
            return deadLetter(run, DeadLetterReason.MAX_ATTEMPTS, errorClass, errorMessage, stackHead);
        }
        Duration wait = defaults.backoffOf(run.binding.task()).delay(run.attempt, random);
        Instant now = clock.instant();
        Instant due = DueTimes.notBefore(now.plus(wait));
        var update = run.tracked() ? JobRecordFormat.retrying(message, delivery.queue(), run.attempt, tracking.worker(), run.started(),
                now, due, errorClass.equals(TimeoutException.class.getName()) ? "timed out" : "failed", errorClass + ": " + errorMessage)
                : null;
        retried.increment();
        stats.retried(delivery.queue(), message.task());
        LOG.log(Level.WARNING, "task {0} (message {1}) failed attempt {2} of {3} with {4}: {5}; retrying in {6} ms",
                message.task(), message.id(), run.attempt, run.maxAttempts, errorClass, errorMessage, String.valueOf(wait.toMillis()));
        return new Outcome.Settle(new Settlement.RetryLater(delivery, message.withAttempt(run.attempt + 1, now), due, update));
    }

    Outcome deadLetter(DeliveryProcessor.Run run, DeadLetterReason reason, String errorClass, String errorMessage, String stackHead) {
        return deadLetter(run.delivery, run.message.task(), run.tracked() ? run.started() : null, reason, errorClass, errorMessage,
                stackHead);
    }

    /** @param started when the run began, for the job record's history; null when it never ran */
    Outcome deadLetter(Delivery delivery, String taskName, Instant started, DeadLetterReason reason, String errorClass,
                               String errorMessage, String stackHead) {
        var failure = new DeadLetter.Failure(reason, errorClass, errorMessage, stackHead, delivery.attempt(), clock.instant());
        deadLettered.increment();
        stats.deadLettered(delivery.queue(), taskName);
        var update = delivery.message().filter(Message::isTracked)
                .map(m -> JobRecordFormat.deadLettered(m, delivery.queue(), delivery.attempt(), tracking.worker(), started,
                        clock.instant(), reason, errorClass + ": " + errorMessage))
                .orElse(null);
        return new Outcome.Settle(new Settlement.DeadLetter(delivery, failure, update));
    }

    static String stackHead(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString().lines().limit(STACK_HEAD_LINES).collect(Collectors.joining("\n"));
    }

    /**
     * What a failed attempt records of its exception. A heap that ran out says how large this JVM's
     * heap is and how to give it more: the master sizes its workers' heaps, so a handler that held
     * less on a JVM of its own can run out on a worker, and the bare error names neither.
     */
    static String failureMessage(Throwable cause) {
        String message = String.valueOf(cause.getMessage());
        if (!(cause instanceof OutOfMemoryError)) {
            return message;
        }
        return message + " (this worker JVM's maximum heap is " + Runtime.getRuntime().maxMemory() / (1024 * 1024) + " MiB: give it more"
                + " with -Xmx, for the master's workers binomic master --jvm-option=-Xmx512m or master.jvmOptions)";
    }
}
