package io.binomic.api.spi;
import io.binomic.api.JobState;

/**
 * The fields of a job record ({@link JobRecord}) that a broker itself reads or writes, and those the
 * core reads back through {@link JobRecord}'s accessors ({@link #ATTEMPT}, {@link #STARTED_AT},
 * {@link #RESULT}, {@link #ERROR}: written by the core, stored by the broker as they are). The core
 * owns every other field. The values of {@link #STATE} are the names of {@link JobState}.
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
    /** Milliseconds the record is kept after the job ends: the message's {@link Message#trackFor()}, written when the record is created. */
    public static final String RETENTION = "retention";
    /** Epoch milliseconds when the job ended. */
    public static final String ENDED_AT = "endedAt";
    /** {@code 1} once a cancel was asked while the job ran. */
    public static final String CANCEL_REQUESTED = "cancelRequested";
    /**
     * {@code "1"} on a job cancelled by its own id ({@code JobHandle.cancel()}) before it ran, as against
     * one a workflow skipped: a workflow never enqueues it, whatever its dependencies do later.
     */
    public static final String CANCELLED_BY_ID = "cancelledById";
    /** The attempt running or last run. */
    public static final String ATTEMPT = "attempt";
    /** Epoch milliseconds when the current or last attempt started. */
    public static final String STARTED_AT = "startedAt";
    /** The result of a succeeded job, as the payload codec's JSON. */
    public static final String RESULT = "result";
    /** Why the job failed: the error of its last attempt. */
    public static final String ERROR = "error";
    /**
     * The id of the batch the job belongs to ({@link Message#batch()}): written with the record by a
     * broker that creates the records of a batch's jobs, and by the core when the job starts.
     */
    public static final String BATCH = "batch";
    /**
     * The id of the workflow the job belongs to ({@link Message#workflow()}): written with the record
     * by a broker that creates the records of a workflow's jobs, and by the core when the job starts.
     */
    public static final String WORKFLOW = "workflow";
}
