package io.binomic.api;

import java.io.Serial;
import java.util.UUID;

/**
 * Thrown by {@link JobHandle#await} and completes {@link JobHandle#result()} when the broker keeps
 * no status for the job: a wrong id or queue, a task that is not tracked, or a status past its
 * retention. Nothing would ever complete the wait, so it ends at once.
 */
public class JobNotFoundException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;
    private final UUID jobId;

    public JobNotFoundException(UUID jobId, String message) {
        super(message);
        this.jobId = jobId;
    }

    public UUID jobId() { return jobId; }
}
