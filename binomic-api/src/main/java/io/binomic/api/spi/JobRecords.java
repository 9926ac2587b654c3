package io.binomic.api.spi;
import io.binomic.api.JobState;
import io.binomic.api.Message;

/**
 * The fields of a job record a broker itself reads or writes; the core owns every other field.
 * The values of {@link #STATE} are the names of {@link JobState}.
 */
public final class JobRecords {
    private JobRecords() { }

    /** The job's {@link JobState} name. */
    public static final String STATE = "state";
    /** The task name, written when the record is created. */
    public static final String TASK = "task";
    /** Due time of a scheduled or retrying job, epoch milliseconds. */
    public static final String DUE = "due";
    /** Epoch milliseconds of the enqueue that created the record. */
    public static final String ENQUEUED_AT = "enqueuedAt";
    /** Milliseconds the record is kept after the job ends: the {@link Message#TRACK} header, written when the record is created. */
    public static final String RETENTION = "retention";
    /** Epoch milliseconds when the job ended. */
    public static final String ENDED_AT = "endedAt";
    /** {@code 1} once a cancel was asked while the job ran. */
    public static final String CANCEL_REQUESTED = "cancelRequested";
}
