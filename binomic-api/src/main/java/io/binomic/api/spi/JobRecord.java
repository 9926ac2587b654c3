package io.binomic.api.spi;

import io.binomic.api.JobState;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;
import java.util.function.Function;

/**
 * The record a broker keeps for a tracked job, as {@link JobStore#readJob} reads it: string fields.
 * The typed accessors read the fields named in {@link JobRecords} (a value that does not parse reads
 * as absent); the core owns the format of the other fields, which {@link #get} gives as they are.
 *
 * @param fields every field of the record
 */
public record JobRecord(Map<String, String> fields) {

    /** The record of a job nobody tracks (or whose record has expired): no field. */
    public static final JobRecord NONE = new JobRecord(Map.of());

    public JobRecord {
        fields = Map.copyOf(fields);
    }

    /** The value of field {@code name}, or null when the record has none. */
    public String get(String name) { return fields.get(name); }

    /** The job's state ({@link JobRecords#STATE}), when the record names a known one. */
    public Optional<JobState> state() { return parsed(JobRecords.STATE, JobState::valueOf); }

    /** The task name ({@link JobRecords#TASK}), empty when the record has none. */
    public String task() { return fields.getOrDefault(JobRecords.TASK, ""); }

    /** The attempt running or last run ({@link JobRecords#ATTEMPT}). */
    public OptionalInt attempt() { return intField(JobRecords.ATTEMPT); }

    /**
     * Field {@code name} as an int, empty when the record has none or holds no int there (a field
     * another version wrote otherwise reads as absent rather than failing the whole record).
     */
    public OptionalInt intField(String name) {
        Optional<Integer> value = parsed(name, Integer::valueOf);
        return value.isPresent() ? OptionalInt.of(value.get()) : OptionalInt.empty();
    }

    /** When a scheduled or retrying job is due ({@link JobRecords#DUE}). */
    public Optional<Instant> due() { return instant(JobRecords.DUE); }

    /** When the enqueue that created the record happened ({@link JobRecords#ENQUEUED_AT}). */
    public Optional<Instant> enqueuedAt() { return instant(JobRecords.ENQUEUED_AT); }

    /** When the current or last attempt started ({@link JobRecords#STARTED_AT}). */
    public Optional<Instant> startedAt() { return instant(JobRecords.STARTED_AT); }

    /** When the job ended ({@link JobRecords#ENDED_AT}). */
    public Optional<Instant> endedAt() { return instant(JobRecords.ENDED_AT); }

    /** How long the record is kept after the job ends ({@link JobRecords#RETENTION}). */
    public Optional<Duration> retention() { return parsed(JobRecords.RETENTION, Long::valueOf).map(Duration::ofMillis); }

    /** The result of a succeeded job, as the codec's JSON ({@link JobRecords#RESULT}). */
    public Optional<String> result() { return Optional.ofNullable(fields.get(JobRecords.RESULT)); }

    /** Why the job failed ({@link JobRecords#ERROR}); empty when none is recorded. */
    public Optional<String> error() { return Optional.ofNullable(fields.get(JobRecords.ERROR)).filter(e -> !e.isEmpty()); }

    /** The batch the job belongs to ({@link JobRecords#BATCH}); empty for a job of no batch, or a record that does not say. */
    public Optional<UUID> batch() { return parsed(JobRecords.BATCH, UUID::fromString); }

    /** The workflow the job belongs to ({@link JobRecords#WORKFLOW}); empty for a job of no workflow, or a record that does not say. */
    public Optional<UUID> workflow() { return parsed(JobRecords.WORKFLOW, UUID::fromString); }

    /** True once a cancel was asked while the job ran ({@link JobRecords#CANCEL_REQUESTED}). */
    public boolean cancelRequested() { return "1".equals(fields.get(JobRecords.CANCEL_REQUESTED)); }

    private Optional<Instant> instant(String name) { return parsed(name, Long::valueOf).map(Instant::ofEpochMilli); }

    /** Field {@code name} read by {@code parser}; empty when absent, or when {@code parser} refuses it (a state or number). */
    private <T> Optional<T> parsed(String name, Function<String, T> parser) {
        try {
            return Optional.ofNullable(fields.get(name)).map(parser);
        } catch (IllegalArgumentException unreadable) {
            return Optional.empty();
        }
    }
}
