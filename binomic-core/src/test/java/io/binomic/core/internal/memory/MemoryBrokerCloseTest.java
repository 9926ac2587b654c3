package io.binomic.core.internal.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Message;
import java.nio.charset.StandardCharsets;
import java.text.MessageFormat;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.ResourceBundle;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The embedded broker keeps nothing after close: it says so instead of dropping a backlog silently. */
class MemoryBrokerCloseTest {

    /** Records what is logged. */
    private static final class RecordingLogger implements System.Logger {
        final List<String> lines = new CopyOnWriteArrayList<>();

        @Override
        public String getName() {
            return "recording";
        }

        @Override
        public boolean isLoggable(Level level) {
            return true;
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
            lines.add(level + " " + msg);
        }

        @Override
        public void log(Level level, ResourceBundle bundle, String format, Object... params) {
            lines.add(level + " " + (params == null || params.length == 0 ? format : MessageFormat.format(format, params)));
        }
    }

    private static Message message(String queue) {
        return Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now(), "{}".getBytes(StandardCharsets.UTF_8), Map.of());
    }

    @Test
    void closingWithQueuedMessagesLogsAWarningWithTheCounts() throws Exception {
        RecordingLogger log = new RecordingLogger();
        MemoryBroker broker = new MemoryBroker(BrokerConfig.defaults(), Clock.systemUTC(), log);
        broker.start(List.of("a", "b"));
        broker.enqueueAll(List.of(message("a"), message("a"), message("b")));
        broker.fetch(List.of("b"), "c1", 1, Duration.ZERO);
        new MemoryScheduler(broker).schedule(message("a"), Instant.now().plusSeconds(60));

        broker.close();
        broker.close();

        assertEquals(List.of("WARNING memory broker memory:// closed with 4 message(s) dropped (2 ready, 1 pending, 1 delayed)"
                + " and 0 dead letter(s) dropped: the embedded broker keeps nothing after close; use a redis:// broker for"
                + " messages that must survive"), log.lines, "one warning, on the first close only");
    }

    @Test
    void anOwnerThatExpectsToDropTheBacklogGetsADebugLineInstead() throws Exception {
        RecordingLogger log = new RecordingLogger();
        MemoryBroker broker = new MemoryBroker(BrokerConfig.defaults(), Clock.systemUTC(), log);
        broker.start(List.of("a"));
        broker.enqueueAll(List.of(message("a")));
        broker.dropOnCloseQuietly();

        broker.close();

        assertEquals(1, log.lines.size(), log.lines.toString());
        assertTrue(log.lines.getFirst().startsWith("DEBUG memory broker memory:// closed with 1 message(s) dropped"), log.lines.toString());
    }

    @Test
    void closingAnEmptyBrokerSaysNothing() {
        RecordingLogger log = new RecordingLogger();
        MemoryBroker broker = new MemoryBroker(BrokerConfig.defaults(), Clock.systemUTC(), log);
        broker.start(List.of("a"));

        broker.close();

        assertEquals(List.of(), log.lines);
    }
}
