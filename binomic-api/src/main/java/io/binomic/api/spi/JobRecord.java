package io.binomic.api.spi;

import io.binomic.api.JobState;
import java.util.Map;
import java.util.Optional;

/**
 * The record a broker keeps for a tracked job, as {@link JobStore#readJob} reads it: string fields,
 * of which the broker itself reads only those named in {@link JobRecords}; the core owns the format
 * of the others.
 *
 * @param fields every field of the record
 */
public record JobRecord(Map<String, String> fields) {

    public JobRecord {
        fields = Map.copyOf(fields);
    }

    /** The value of field {@code name}, or null when the record has none. */
    public String get(String name) {
        return fields.get(name);
    }

    /** The job's state ({@link JobRecords#STATE}), when the record names a known one. */
    public Optional<JobState> state() {
        String state = fields.get(JobRecords.STATE);
        if (state == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(JobState.valueOf(state));
        } catch (IllegalArgumentException unknown) {
            return Optional.empty();
        }
    }
}
