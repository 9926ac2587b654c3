package io.binomic.api;

import java.io.Serial;
import java.util.UUID;

/** Thrown by {@link JobHandle#await} and completes {@link JobHandle#result()}: a job ended in the dead-letter queue (its JobStatus tells why). */
public class JobFailedException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;
    private final UUID jobId;

    public JobFailedException(UUID jobId, String message) {
        super(message);
        this.jobId = jobId;
    }

    public UUID jobId() { return jobId; }
}
