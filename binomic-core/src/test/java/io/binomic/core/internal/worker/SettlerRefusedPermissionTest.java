package io.binomic.core.internal.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerPermissionException;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Found by an outside tester: outcomes Redis refused to the worker's ACL user (NOPERM) were given up while Redis
 * answered every other call, and their jobs ran again by reclaim once the command was granted back. They are held
 * as during an outage; a stop gives them up as it gives up those of an outage, naming the refusal.
 */
class SettlerRefusedPermissionTest {
    private static Delivery delivery(String id) {
        Message m = Message.builder().id(UUID.randomUUID()).task("t").queue("q").enqueuedAt(Instant.EPOCH)
                .payload("{}".getBytes(StandardCharsets.UTF_8)).build();
        return new Delivery("q", id, Optional.of(m), 1, Map.of(), Optional.empty());
    }

    @Test
    void anOutcomeRefusedForAPermissionIsHeldWhileTheBrokerAnswersAndGivenUpOnlyAtTheStop() throws Exception {
        Settler s = new Settler(new SettleOnlyBroker(sent -> {
            throw new BrokerPermissionException("Redis at r:1 refused settle on queues [q]: ACL user 'w' lacks command xack"
                    + " (NOPERM); grant it: ACL SETUSER w +xack", "ACL SETUSER w +xack", null);
        }), "c", 8, key -> null, d -> { });
        s.submit(new Settlement.Ack(delivery("1-0")));
        // more tries than an outcome refused for good gets before it is given up
        for (int i = 0; i < 6; i++) {
            s.sendOnce(Duration.ofMillis(10));
            s.brokerAnswered(System.nanoTime()); // a lease renewal or the probe, answered between the tries
        }
        assertEquals(0, s.abandoned.sum(), "none given up");
        assertEquals(1, s.held().total, "held");
        assertTrue(s.stuck(), "the fetcher takes no new work meanwhile");
        assertEquals("ACL SETUSER w +xack", s.refusedGrant);

        Settler.GivenUp givenUp = s.giveUpAtStop();
        assertEquals(1, givenUp.count());
        assertTrue(givenUp.byQueue().startsWith("1 of queue q: Redis at r:1 refused settle") && givenUp.byQueue().contains("(NOPERM)"),
                givenUp.byQueue());
    }
}
