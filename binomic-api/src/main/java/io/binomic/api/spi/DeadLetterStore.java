package io.binomic.api.spi;

import io.binomic.api.DeadLetter;
import java.util.List;
import java.util.Optional;

/**
 * A {@link Broker} capability: reading, replaying and deleting the dead letters that
 * {@link Broker#settle} stored ({@link Settlement.DeadLetter}). Without it the dead letters are
 * kept but operators cannot list or replay them.
 */
public interface DeadLetterStore {

    /** Reads up to {@code count} dead letters of {@code queue} after {@code cursor} (empty = from the oldest). */
    List<DeadLetter> readDeadLetters(String queue, Optional<String> cursor, int count);

    /**
     * The dead letter {@code deadLetterId} of {@code queue}, if there is one.
     *
     * @throws IllegalArgumentException when {@code deadLetterId} is not an id this broker could have given
     */
    Optional<DeadLetter> readDeadLetter(String queue, String deadLetterId);

    /**
     * Atomically moves each dead letter back onto its queue with attempt 1, a fresh enqueue time and
     * the {@link Message#REPLAYED_FROM} header; returns how many were replayed. Ids that do not
     * exist (any more) and entries without a decodable message ({@link DeadLetter#message()} empty)
     * are skipped: the caller tells which by reading them first.
     *
     * @throws IllegalArgumentException when an id is not an id this broker could have given
     */
    int replayDeadLetters(String queue, List<String> deadLetterIds);

    /** Deletes dead letters; returns how many existed. */
    int deleteDeadLetters(String queue, List<String> deadLetterIds);
}
