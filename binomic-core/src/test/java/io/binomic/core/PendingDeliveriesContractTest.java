package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.PendingDeliveries;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The behaviour of {@link PendingDeliveries}: what a consumer still holds, listed without counting
 * a delivery. Each implementation extends this class and says how to create an unstarted broker.
 */
public abstract class PendingDeliveriesContractTest extends BrokerContractFixture {

    protected PendingDeliveriesContractTest() {
    }

    @Test
    void pendingOfListsOnlyTheConsumersOwnDeliveriesAndChangesNothing() throws Exception {
        broker.enqueueAll(List.of(message("t", "{\"i\":1}"), message("t", "{\"i\":2}"), message("t", "{\"i\":3}")));
        List<Delivery> mine = fetch(2);
        List<Delivery> theirs = broker.fetch(List.of(queue), "c2", 1, Duration.ofMillis(200));
        assertEquals(1, theirs.size());

        List<Delivery> pending = BrokerCapabilities.pendingDeliveries(broker).pendingOf(queue, "c1", 10);

        if (!pending.isEmpty()) { // optional for a broker whose fetch cannot lose what it handed out
            assertEquals(mine, pending, "the same deliveries, at the same counts");
        }
        assertEquals(List.of(), ack("c1", mine), "listing them counted no delivery");
        assertEquals(1, broker.stats(queue).pending());
    }
}
