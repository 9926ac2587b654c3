package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.Task;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A process's first submit to a queue while the broker does not answer waits for the read of the
 * queue's partitions, then for its write: about twice the command timeout. The write's own message
 * names its bound alone, so the submit's failure says how long it blocked in all.
 */
class FirstSubmitOutageTest {
    private static final long READ_MILLIS = 300;
    private static final String WRITE_FAILED = "Redis at 127.0.0.1:1 did not answer the enqueue within 200 ms"
            + " (BrokerConfig.commandTimeout): Redis is stopped, frozen or unreachable";

    /** A memory broker whose partitions read and whose enqueue each wait, then fail, as against a Redis that refuses connections. */
    private static Broker unreachable(Broker memory) {
        Partitioning partitioning = new Partitioning() {
            @Override
            public Map<String, QueuePartitions> partitions(List<String> queues) {
                sleep(READ_MILLIS);
                throw new BrokerException("Redis at 127.0.0.1:1 did not answer the read of partitions within 300 ms");
            }

            @Override
            public void setPartitions(String queue, QueuePartitions partitions) { }
        };
        return new ForwardingBroker(memory) {
            @Override
            public <T> Optional<T> capability(Class<T> type) {
                return type == Partitioning.class ? Optional.of(type.cast(partitioning)) : super.capability(type);
            }

            @Override
            public void enqueue(Message message) {
                sleep(200);
                throw new BrokerException(WRITE_FAILED);
            }
        };
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BrokerException("interrupted", e);
        }
    }

    @Test
    void theFirstSubmitsFailureSaysItWaitedForThePartitionsBeforeItsWrite() {
        Task<String, Void> task = Task.builder("mail", String.class).build();
        try (Broker memory = new MemoryBrokerProvider().create(BrokerConfig.defaults());
             Binomic binomic = Binomic.builder().broker(unreachable(memory)).task(task).build().start()) {
            BrokerException first = assertThrows(BrokerException.class, () -> binomic.submit(task, "a"));

            assertTrue(first.getMessage().startsWith(WRITE_FAILED), first.getMessage());
            Matcher m = Pattern.compile("\\(this submit blocked (\\d+) ms in all: before the write it waited (\\d+) ms for the"
                    + " queue's partitions, which a process reads at its first submit to a queue, and that read failed too\\)$")
                    .matcher(first.getMessage());
            assertTrue(m.find(), first.getMessage());
            assertTrue(Long.parseLong(m.group(2)) >= READ_MILLIS, first.getMessage());
            assertTrue(Long.parseLong(m.group(1)) >= READ_MILLIS + 200, first.getMessage());

            // The partitions are not read again within a second: the next submit waits for its write alone, and says so.
            BrokerException next = assertThrows(BrokerException.class, () -> binomic.submit(task, "b"));
            assertEquals(WRITE_FAILED, next.getMessage());
        }
    }
}
