package io.binomic.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.core.ForwardingBroker;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class PartitionRouterTest {

    /**
     * A producer thread's submit read the partitions of a queue while another thread paused that
     * queue (a pause forgets what was read, to read it again): the submit threw a
     * NullPointerException. Here the forget lands in the middle of the read, as that thread's did.
     */
    @Test
    void aQueueForgottenByAnotherThreadWhileOthersAreReadIsStillAnswered() {
        AtomicReference<PartitionRouter> router = new AtomicReference<>();
        Partitioning partitioning = new Partitioning() {
            @Override
            public Map<String, QueuePartitions> partitions(List<String> queues) {
                router.get().forget("fresh");
                return Map.of();
            }

            @Override
            public void setPartitions(String queue, QueuePartitions partitions) { }
        };
        try (Broker broker = new ForwardingBroker(new MemoryBrokerProvider().create(BrokerConfig.defaults())) {
            @Override
            public <T> Optional<T> capability(Class<T> type) {
                return type == Partitioning.class ? Optional.of(type.cast(partitioning)) : super.capability(type);
            }
        }) {
            router.set(new PartitionRouter(broker));
            router.get().of(List.of("fresh"));

            Map<String, QueuePartitions> both = router.get().of(List.of("fresh", "unread"));

            assertEquals(Map.of("fresh", QueuePartitions.ONE, "unread", QueuePartitions.ONE), both);
        }
    }
}
