package io.binomic.core.internal.jobs;

import static io.binomic.core.internal.jobs.JobRecordFormat.ATTEMPT;
import static io.binomic.core.internal.jobs.JobRecordFormat.DURATION;
import static io.binomic.core.internal.jobs.JobRecordFormat.ERROR;
import static io.binomic.core.internal.jobs.JobRecordFormat.HISTORY_PREFIX;
import static io.binomic.core.internal.jobs.JobRecordFormat.NOTE;
import static io.binomic.core.internal.jobs.JobRecordFormat.PROGRESS;
import static io.binomic.core.internal.jobs.JobRecordFormat.REASON;
import static io.binomic.core.internal.jobs.JobRecordFormat.RESULT;
import static io.binomic.core.internal.jobs.JobRecordFormat.STARTED_AT;
import static io.binomic.core.internal.jobs.JobRecordFormat.WORKER;

import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.TraceContext;
import io.binomic.api.spi.JobRecords;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;
import java.util.function.Function;

/** A {@link JobStatus} read from a job record's fields. */
record RecordedJobStatus(String queue, UUID id, Map<String, String> fields) implements JobStatus {

    RecordedJobStatus {
        fields = Map.copyOf(fields);
    }

    @Override
    public String task() {
        return fields.getOrDefault(JobRecords.TASK, "");
    }

    @Override
    public JobState state() {
        String state = fields.get(JobRecords.STATE);
        if (state == null) {
            return JobState.UNKNOWN;
        }
        try {
            return JobState.valueOf(state);
        } catch (IllegalArgumentException e) {
            return JobState.UNKNOWN;
        }
    }

    @Override
    public int attempt() {
        return intField(ATTEMPT).orElse(0);
    }

    @Override
    public Optional<Instant> due() {
        return instant(JobRecords.DUE);
    }

    @Override
    public Optional<String> worker() {
        return Optional.ofNullable(fields.get(WORKER));
    }

    @Override
    public Optional<Instant> startedAt() {
        return instant(STARTED_AT);
    }

    @Override
    public Optional<Instant> endedAt() {
        return instant(JobRecords.ENDED_AT);
    }

    @Override
    public Optional<Duration> duration() {
        return Optional.ofNullable(fields.get(DURATION)).map(v -> Duration.ofMillis(Long.parseLong(v)));
    }

    @Override
    public Optional<String> result() {
        return Optional.ofNullable(fields.get(RESULT));
    }

    /** Why a succeeded job's result was not kept (it was too large), if it was not. */
    Optional<String> resultDropped() {
        return Optional.ofNullable(fields.get(JobRecordFormat.RESULT_DROPPED));
    }

    @Override
    public Optional<DeadLetterReason> deadLetterReason() {
        return Optional.ofNullable(fields.get(REASON)).map(DeadLetterReason::valueOf);
    }

    @Override
    public Optional<String> error() {
        return Optional.ofNullable(fields.get(ERROR)).filter(e -> !e.isEmpty());
    }

    @Override
    public OptionalInt progress() {
        return intField(PROGRESS);
    }

    @Override
    public Optional<String> progressNote() {
        return Optional.ofNullable(fields.get(NOTE));
    }

    @Override
    public Optional<TraceContext> traceContext() {
        return TraceContext.fromHeaders(fields);
    }

    @Override
    public boolean cancelRequested() {
        return "1".equals(fields.get(JobRecords.CANCEL_REQUESTED));
    }

    @Override
    public List<Attempt> attempts() {
        List<Attempt> attempts = new ArrayList<>();
        for (var field : fields.entrySet()) {
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

    private OptionalInt intField(String name) {
        return parsed(name, Integer::parseInt).map(OptionalInt::of).orElse(OptionalInt.empty());
    }

    private Optional<Instant> instant(String name) {
        return parsed(name, v -> Instant.ofEpochMilli(Long.parseLong(v)));
    }

    /** A field this version did not write, or wrote otherwise, reads as absent rather than failing the whole status. */
    private <T> Optional<T> parsed(String name, Function<String, T> parse) {
        try {
            return Optional.ofNullable(fields.get(name)).map(parse);
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    @Override
    public String toString() {
        return "JobStatus[" + id + " " + state() + (task().isEmpty() ? "" : " " + task()) + ", attempt " + attempt()
                + error().map(e -> ", error " + e).orElse("") + "]";
    }
}
