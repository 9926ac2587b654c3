package io.binomic.api;

import java.io.Serial;
import java.util.UUID;

/** Thrown by {@link JobHandle#await} and completes {@link JobHandle#result()}: a job was cancelled. */
public class JobCancelledException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;
    private final UUID jobId;

    public JobCancelledException(UUID jobId, String message) {
        super(message);
        this.jobId = jobId;
    }

    public UUID jobId() { return jobId; }
}
