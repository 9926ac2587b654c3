package io.binomic.core.internal.jobs;

import static io.binomic.core.internal.jobs.JobRecordFormat.DURATION;
import static io.binomic.core.internal.jobs.JobRecordFormat.HISTORY_PREFIX;
import static io.binomic.core.internal.jobs.JobRecordFormat.NOTE;
import static io.binomic.core.internal.jobs.JobRecordFormat.PROGRESS;
import static io.binomic.core.internal.jobs.JobRecordFormat.REASON;
import static io.binomic.core.internal.jobs.JobRecordFormat.WORKER;

import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.TraceContext;
import io.binomic.api.spi.JobRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;

/**
 * A {@link JobStatus} read from a job record: the fields the broker knows through the record's
 * typed accessors, the core's own (worker, progress, history) from its fields.
 */
record RecordedJobStatus(String queue, UUID id, JobRecord record) implements JobStatus {

    @Override
    public String task() { return record.task(); }

    @Override
    public JobState state() { return record.state().orElse(JobState.UNKNOWN); }

    @Override
    public int attempt() { return record.attempt().orElse(0); }

    @Override
    public Optional<Instant> due() { return record.due(); }

    @Override
    public Optional<String> worker() { return Optional.ofNullable(record.get(WORKER)); }

    @Override
    public Optional<Instant> startedAt() { return record.startedAt(); }

    @Override
    public Optional<Instant> endedAt() { return record.endedAt(); }

    @Override
    public Optional<Duration> duration() {
        return Optional.ofNullable(record.get(DURATION)).map(v -> Duration.ofMillis(Long.parseLong(v)));
    }

    @Override
    public Optional<String> result() { return record.result(); }

    /** Why a succeeded job's result was not kept (it was too large), if it was not. */
    Optional<String> resultDropped() { return Optional.ofNullable(record.get(JobRecordFormat.RESULT_DROPPED)); }

    @Override
    public Optional<DeadLetterReason> deadLetterReason() {
        return Optional.ofNullable(record.get(REASON)).map(DeadLetterReason::valueOf);
    }

    @Override
    public Optional<String> error() { return record.error(); }

    @Override
    public OptionalInt progress() { return record.intField(PROGRESS); }

    @Override
    public Optional<String> progressNote() { return Optional.ofNullable(record.get(NOTE)); }

    @Override
    public Optional<TraceContext> traceContext() { return TraceContext.fromHeaders(record.fields()); }

    @Override
    public Optional<UUID> batchId() { return record.batch(); }

    @Override
    public Optional<UUID> workflowId() { return record.workflow(); }

    @Override
    public boolean cancelRequested() { return record.cancelRequested(); }

    @Override
    public List<Attempt> attempts() {
        List<Attempt> attempts = new ArrayList<>();
        for (var field : record.fields().entrySet()) {
            if (!field.getKey().startsWith(HISTORY_PREFIX)) {
                continue;
            }
            String[] parts = field.getValue().split("\t", 5);
            if (parts.length < 5) {
                continue;
            }
            try {
                attempts.add(new Attempt(Integer.parseInt(field.getKey().substring(HISTORY_PREFIX.length())), parts[0],
                        Instant.ofEpochMilli(Long.parseLong(parts[1])), Instant.ofEpochMilli(Long.parseLong(parts[2])), parts[3],
                        parts[4]));
            } catch (NumberFormatException ignored) {
                // A field this version did not write: skip it rather than fail the whole status.
            }
        }
        attempts.sort(Comparator.comparingInt(Attempt::attempt));
        return List.copyOf(attempts);
    }

    @Override
    public String toString() {
        return "JobStatus[" + id + " " + state() + (task().isEmpty() ? "" : " " + task()) + ", attempt " + attempt()
                + error().map(e -> ", error " + e).orElse("") + "]";
    }
}
