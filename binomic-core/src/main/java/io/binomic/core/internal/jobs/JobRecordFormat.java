package io.binomic.core.internal.jobs;

import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.spi.JobRecord;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The core's side of job records: what each step of a tracked job writes, and how a record reads
 * back as a {@link JobStatus}. Brokers store the fields and read only {@link JobRecords}'.
 */
public final class JobRecordFormat {
    static final String WORKER = "worker";
    static final String DURATION = "durationMs";
    static final String RESULT_DROPPED = "resultDropped";
    static final String REASON = "reason";
    static final String PROGRESS = "progress";
    static final String NOTE = "note";
    /** History entries are fields {@code a.<attempt>}: worker, start, end, outcome, error, tab-separated. */
    static final String HISTORY_PREFIX = "a.";
    private static final int MAX_TEXT = 2_000;

    private JobRecordFormat() { }

    /** How long a tracked message's record is kept after it ends; zero when it is not tracked. */
    public static Duration retentionOf(Message message) { return message.trackFor().orElse(Duration.ZERO); }

    public static JobUpdate started(Message message, String queue, int attempt, String worker, Instant now) {
        Map<String, String> set = new HashMap<>();
        set.put(JobRecords.STATE, JobState.RUNNING.name());
        set.put(JobRecords.TASK, message.task());
        set.put(JobRecords.ATTEMPT, Integer.toString(attempt));
        set.put(WORKER, worker);
        set.put(JobRecords.STARTED_AT, Long.toString(now.toEpochMilli()));
        // The message's trace context, for the job page: its headers are not in the record otherwise.
        message.traceContext().ifPresent(trace -> set.putAll(trace.headers()));
        // And its batch and workflow, for a record a broker created without them (a replay's, or one
        // written before records named them): the job page links to what the job belongs to.
        if (message.batch() != null) {
            set.put(JobRecords.BATCH, message.batch().toString());
        }
        if (message.workflow() != null) {
            set.put(JobRecords.WORKFLOW, message.workflow().toString());
        }
        List<String> delete = List.of(JobRecords.DUE, PROGRESS, NOTE);
        return new JobUpdate(queue, message.id(), set, delete, Duration.ZERO, false);
    }

    /**
     * The update of a job marked started whose handler was not called after all (its start came too
     * late for its rate limit): due again at {@code due}, its due time until the mark.
     */
    public static JobUpdate givenBack(Message message, String queue, Instant due) {
        Map<String, String> set = new HashMap<>();
        set.put(JobRecords.STATE, JobState.SCHEDULED.name());
        set.put(JobRecords.DUE, Long.toString(due.toEpochMilli()));
        return new JobUpdate(queue, message.id(), set, List.of(JobRecords.STARTED_AT, WORKER, PROGRESS, NOTE), Duration.ZERO, false);
    }

    public static JobUpdate progress(Message message, String queue, int percent, String note) {
        return new JobUpdate(queue, message.id(), Map.of(PROGRESS, Integer.toString(percent), NOTE, clip(note)), List.of(),
                Duration.ZERO, false);
    }

    public static JobUpdate succeeded(Message message, String queue, int attempt, String worker, Instant started, Instant now,
                                      String resultJson, int maxResultBytes) {
        Map<String, String> set = ended(JobState.SUCCEEDED, now);
        set.put(DURATION, Long.toString(Duration.between(started, now).toMillis()));
        if (resultJson != null) {
            int bytes = resultJson.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > maxResultBytes) {
                // The job did succeed; only its result is not kept, and whoever waits for it is told why.
                set.put(RESULT_DROPPED, "the result of " + bytes + " bytes is over the broker's maxPayloadBytes (" + maxResultBytes
                        + "), so it was not kept: return a smaller value (an id, a URL), or raise BrokerConfig.maxPayloadBytes");
            } else {
                set.put(JobRecords.RESULT, resultJson);
            }
        }
        history(set, attempt, worker, started, now, "succeeded", "");
        return new JobUpdate(queue, message.id(), set, deletions(attempt, JobRecords.ERROR), retentionOf(message), true);
    }

    public static JobUpdate retrying(Message message, String queue, int attempt, String worker, Instant started, Instant now,
                                     Instant due, String outcome, String error) {
        Map<String, String> set = new HashMap<>();
        set.put(JobRecords.STATE, JobState.RETRYING.name());
        set.put(JobRecords.DUE, Long.toString(due.toEpochMilli()));
        set.put(JobRecords.ERROR, clip(error));
        history(set, attempt, worker, started, now, outcome, error);
        List<String> delete = deletions(attempt);
        delete.remove(JobRecords.DUE); // set just above: the next attempt's due time
        return new JobUpdate(queue, message.id(), set, delete, Duration.ZERO, false);
    }

    public static JobUpdate deadLettered(Message message, String queue, int attempt, String worker, Instant started, Instant now,
                                         DeadLetterReason reason, String error) {
        Map<String, String> set = ended(JobState.DEAD_LETTERED, now);
        set.put(REASON, reason.name());
        set.put(JobRecords.ERROR, clip(error));
        if (started != null) {
            history(set, attempt, worker, started, now, "dead-lettered", error);
        }
        return new JobUpdate(queue, message.id(), set, deletions(attempt), retentionOf(message), true);
    }

    public static JobUpdate cancelled(Message message, String queue, int attempt, String worker, Instant started, Instant now) {
        Map<String, String> set = ended(JobState.CANCELLED, now);
        if (started != null) {
            history(set, attempt, worker, started, now, "cancelled", "");
        }
        return new JobUpdate(queue, message.id(), set, deletions(attempt), retentionOf(message), true);
    }

    /** The update {@code cancel()} applies to a job that has not started. */
    public static JobUpdate cancelledBeforeStart(String queue, UUID id, Instant now) {
        return new JobUpdate(queue, id, ended(JobState.CANCELLED, now), List.of(JobRecords.DUE), Duration.ZERO, true);
    }

    private static Map<String, String> ended(JobState state, Instant now) {
        Map<String, String> set = new HashMap<>();
        set.put(JobRecords.STATE, state.name());
        set.put(JobRecords.ENDED_AT, Long.toString(now.toEpochMilli()));
        return set;
    }

    private static void history(Map<String, String> set, int attempt, String worker, Instant started, Instant now,
                                String outcome, String error) {
        if (started == null) {
            started = now;
        }
        set.put(HISTORY_PREFIX + attempt, String.join("\t", worker, Long.toString(started.toEpochMilli()),
                Long.toString(now.toEpochMilli()), outcome, clip(error).replace('\t', ' ').replace('\n', ' ')));
    }

    private static List<String> deletions(int attempt, String... more) {
        List<String> delete = new ArrayList<>(List.of(more));
        if (attempt > JobStatus.MAX_HISTORY) {
            delete.add(HISTORY_PREFIX + (attempt - JobStatus.MAX_HISTORY));
        }
        delete.add(JobRecords.DUE);
        return delete;
    }

    private static String clip(String text) {
        if (text == null) {
            return "";
        }
        return text.length() <= MAX_TEXT ? text : text.substring(0, MAX_TEXT) + "...";
    }

    /** Reads a record; an absent one is {@link JobState#UNKNOWN}. */
    public static JobStatus read(String queue, UUID id, JobRecord record) {
        return new RecordedJobStatus(queue, id, record);
    }
}
