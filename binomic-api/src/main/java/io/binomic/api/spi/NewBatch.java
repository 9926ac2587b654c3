package io.binomic.api.spi;

import io.binomic.api.BatchStatus;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * A batch as the core asks a broker to create it ({@link Batches#submitBatch}).
 *
 * @param id the batch id (a UUIDv7); every job of the batch carries it ({@link Message#batch()})
 * @param open true when jobs may be added later ({@link Batches#addToBatch}) until {@link Batches#closeBatch}
 * @param retention how long the batch's record is kept once every job ended (and it is closed)
 * @param callbacks the callback jobs, each enqueued at most once when its condition is met
 *        ({@link BatchStatus.Callback}), each carrying {@link Message#batchCallback()}
 */
public record NewBatch(UUID id, boolean open, Duration retention, Map<BatchStatus.Callback, Message> callbacks) {

    public NewBatch {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(retention, "retention");
        if (retention.toMillis() < 1) {
            throw new IllegalArgumentException("retention must be at least 1 ms, was " + retention);
        }
        callbacks = Map.copyOf(callbacks);
    }
}
