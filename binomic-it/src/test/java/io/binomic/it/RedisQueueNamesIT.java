package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.QueueNames;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The queues a Redis broker names: those of its own key prefix, each once, whatever its priority levels and partitions,
 * a queue that holds jobs of a priority level only among them.
 */
class RedisQueueNamesIT {

    @Test
    void theQueuesOfItsPrefixAreNamedOnceEach() {
        String prefix = "names-" + UUID.randomUUID().toString().substring(0, 8);
        Broker broker = Brokers.redis(RedisServer.shared(), b -> b.keyPrefix(prefix));
        Broker other = Brokers.redis(RedisServer.shared(), b -> b.keyPrefix(prefix + "x"));
        try {
            broker.start(List.of("mail", "reports"));
            broker.enqueue(message("mail", Map.of(Message.PRIORITY, "9")));
            broker.enqueue(message("mail@1", Map.of())); // a partition of mail: its own stream, the same queue
            broker.enqueue(message("billing", Map.of()));
            broker.enqueue(message("urgent", Map.of(Message.PRIORITY, "9"))); // a queue with a level's stream only
            other.start(List.of("elsewhere"));
            other.enqueue(message("elsewhere", Map.of()));

            QueueNames names = broker.capability(QueueNames.class).orElseThrow();
            assertEquals(List.of("billing", "mail", "reports", "urgent"), names.queueNames(100));
            assertEquals(2, names.queueNames(2).size(), "at most as many as asked");
        } finally {
            other.close();
            broker.close();
        }
    }

    private static Message message(String queue, Map<String, String> headers) {
        return Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "x".getBytes(StandardCharsets.UTF_8), headers);
    }
}
