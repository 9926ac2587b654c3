package io.binomic.core.internal.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.binomic.api.DeadLetter.Failure;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A worker frozen past its lease reclaims its own delivery on waking, at a higher delivery count; the
 * outcome it then writes is re-addressed to that count and must still carry the job record's update.
 */
class SettlerHeldNowTest {

    private final Message message = Message.builder().id(UUID.randomUUID()).task("t").queue("q")
            .enqueuedAt(Instant.EPOCH).payload("{}".getBytes(StandardCharsets.UTF_8)).build();
    private final Delivery handed = delivery(1);
    private final Delivery heldNow = delivery(2);
    private final JobUpdate job = new JobUpdate("q", message.id(), Map.of("state", "SUCCEEDED"), List.of(), Duration.ZERO, true);
    private final Settler settler = new Settler(null, "c", 8, receipt -> heldNow, d -> { });

    private Delivery delivery(int count) {
        return new Delivery("q", "1-0", Optional.of(message), count, Map.of(), Optional.empty());
    }

    @Test
    void everyOutcomeReAddressedToTheHigherCountKeepsItsJobUpdate() {
        Failure failure = new Failure(DeadLetterReason.MAX_ATTEMPTS, "E", "m", "", 1, Instant.EPOCH);
        List<Settlement> outcomes = List.of(new Settlement.Ack(handed, job),
                new Settlement.RetryLater(handed, message, Instant.EPOCH, job), new Settlement.DeadLetter(handed, failure, job));
        for (Settlement s : outcomes) {
            Settlement sent = settler.asHeldNow(s);
            assertEquals(2, sent.delivery().deliveryCount(), "addressed to the delivery as held now: " + s);
            assertSame(job, switch (sent) {
                case Settlement.Ack a -> a.job();
                case Settlement.RetryLater r -> r.job();
                case Settlement.DeadLetter d -> d.job();
            }, "the job record's update goes with " + s.getClass().getSimpleName());
        }
    }
}
