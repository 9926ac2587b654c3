package io.binomic.api;

import java.io.Serial;
import java.util.UUID;

/**
 * Thrown by {@code BatchHandle.add} and {@code BatchHandle.close()} when the broker keeps no record
 * of the batch: a wrong id, or a batch past its retention. Nothing was added or closed; its
 * {@code status()} is empty and its {@code cancel()} returns {@code NOT_FOUND}.
 */
public class BatchNotFoundException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;
    private final UUID batchId;

    public BatchNotFoundException(UUID batchId, String message) {
        super(message);
        this.batchId = batchId;
    }

    /** The id no batch has. */
    public UUID batchId() { return batchId; }
}
