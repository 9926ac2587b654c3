package io.binomic.api;

/** Where a job is in its life. */
public enum JobState {
    /** On its queue, waiting for a worker. */
    QUEUED,
    /** A job of a workflow, held in its workflow's record until the jobs it depends on succeeded. */
    WAITING,
    /** A DELAY job waiting for its due time ({@link JobStatus#due()}). */
    SCHEDULED,
    /** A worker runs it ({@link JobStatus#attempt()}, {@link JobStatus#worker()}, {@link JobStatus#startedAt()}). */
    RUNNING,
    /** An attempt failed; the next one is due at {@link JobStatus#due()}. */
    RETRYING,
    /** The handler returned ({@link JobStatus#result()}, {@link JobStatus#duration()}). */
    SUCCEEDED,
    /** It ended in the dead-letter queue ({@link JobStatus#deadLetterReason()}, {@link JobStatus#error()}). */
    DEAD_LETTERED,
    /** It was cancelled: it will not run (again). */
    CANCELLED,
    /**
     * Nothing is known: the id is wrong, the task is not tracked ({@link Task#isTracked()}), or the
     * status was kept for less time than has passed since the job ended.
     */
    UNKNOWN;

    /** True for the states a job does not leave. */
    public boolean isFinal() { return this == SUCCEEDED || this == DEAD_LETTERED || this == CANCELLED; }
}
