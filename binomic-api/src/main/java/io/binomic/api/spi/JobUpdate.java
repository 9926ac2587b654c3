package io.binomic.api.spi;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * A change to the record a broker keeps for a tracked job (a message with the
 * {@link Message#TRACK} header): a hash of string fields, under the queue's key
 * space. The core decides what to write; a broker applies it atomically, and reads only the
 * fields named in {@link JobRecords} to decide whether to apply it.
 *
 * @param queue the job's queue
 * @param id the job (message) id
 * @param set fields to set
 * @param delete fields to remove
 * @param expireAfter when positive, the record is removed that long after this update; zero leaves its expiry alone
 * @param ends true when this update puts the job in a final state: the broker then notifies
 *        {@linkplain JobStore#subscribeJobEvents subscribers} with {@link JobEvent.Kind#ENDED}
 */
public record JobUpdate(String queue, UUID id, Map<String, String> set, List<String> delete, Duration expireAfter, boolean ends) {

    public JobUpdate {
        Objects.requireNonNull(queue, "queue");
        Objects.requireNonNull(id, "id");
        set = Map.copyOf(set);
        delete = List.copyOf(delete);
        Objects.requireNonNull(expireAfter, "expireAfter");
        if (expireAfter.isNegative()) {
            throw new IllegalArgumentException("expireAfter must not be negative, was " + expireAfter);
        }
    }
}
