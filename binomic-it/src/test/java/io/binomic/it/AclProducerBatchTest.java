package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BatchStatus;
import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.NewBatch;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A producer connected as the documented producer ACL user submits a batch, adds to it and closes
 * it, the close completing it (the callback enqueued, the record given its expiry): the rule set
 * grants every command the batch scripts call.
 */
class AclProducerBatchTest {

    @Test
    void theProducerRuleSetSubmitsAddsToAndClosesABatch() throws Exception {
        String queue = "acl-batch-" + UUID.randomUUID().toString().substring(0, 8);
        try (Broker producer = Brokers.redis(AclRedis.shared(), AclRedis.as(AclRedis.PRODUCER));
             Broker worker = Brokers.redis(AclRedis.shared(), AclRedis.as(AclRedis.WORKER))) {
            producer.start(List.of(queue));
            worker.start(List.of(queue));
            Batches batches = producer.capability(Batches.class).orElseThrow();
            UUID id = UUID.randomUUID();
            Message callback = Message.builder().id(UUID.randomUUID()).task("done").queue(queue).enqueuedAt(Instant.now())
                    .payload("{}".getBytes(StandardCharsets.UTF_8)).batchCallback(id).build();
            batches.submitBatch(new NewBatch(id, true, Duration.ofMinutes(1), Map.of(BatchStatus.Callback.COMPLETE, callback)),
                    List.of(job(id, queue)));
            assertTrue(batches.addToBatch(id, List.of(job(id, queue))));
            for (Delivery d : worker.fetch(List.of(queue), "w", 10, Duration.ofSeconds(1))) {
                assertTrue(worker.settle("w", List.of(new Settlement.Ack(d, null))).allApplied());
            }
            assertTrue(batches.closeBatch(id));
            List<Delivery> callbacks = worker.fetch(List.of(queue), "w", 10, Duration.ofSeconds(1));
            assertEquals(List.of("done"), callbacks.stream().map(d -> d.message().orElseThrow().task()).toList());
            // the worker acked them unrun (no job update): counted as cancelled, which the close completed
            assertEquals(2, batches.readBatch(id).orElseThrow().cancelled());
        }
    }

    private static Message job(UUID batch, String queue) {
        return Message.builder().id(UUID.randomUUID()).task("child").queue(queue).enqueuedAt(Instant.now())
                .payload("{}".getBytes(StandardCharsets.UTF_8)).trackFor(Duration.ofMinutes(1)).batch(batch).build();
    }
}
