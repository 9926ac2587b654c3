package io.binomic.core.internal.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.Uniqueness;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.UniqueClaim;
import io.binomic.api.spi.UniqueSubmits;
import io.binomic.core.BrokerCapabilities;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** The embedded broker drops expired unique keys, as Redis expires them, so a long-lived one does not grow without bound. */
class MemoryUniqueKeySweepTest {
    private Instant now = Instant.parse("2026-12-01T00:00:00Z");
    private final Clock clock = new Clock() {
        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    };

    private static Message unique(String key) {
        UniqueClaim claim = new UniqueClaim(Uniqueness.Scope.FOR_PERIOD, Duration.ofSeconds(1), key);
        return Message.fromWire(UUID.randomUUID(), "refresh", "sweep", 1, Instant.parse("2026-12-01T00:00:00Z"),
                "{}".getBytes(StandardCharsets.UTF_8), Map.of("codec", "json-jdk", UniqueClaim.HEADER, claim.headerValue()));
    }

    @Test
    void keysHeldForAPeriodThatPassedAreDroppedByLaterSubmitsAndLiveOnesStay() {
        try (MemoryBroker broker = new MemoryBroker(BrokerConfig.defaults(), clock)) {
            broker.start(List.of());
            UniqueSubmits unique = BrokerCapabilities.uniqueSubmits(broker);
            unique.submitAllUnique(IntStream.range(0, 3000).mapToObj(i -> unique("old-" + i)).toList(), null);
            assertEquals(3000, broker.uniqueKeysKept());

            now = now.plusSeconds(2); // every "old" key's period has passed
            Message live = unique("live");
            UUID liveId = unique.submitUnique(live, null);
            unique.submitAllUnique(IntStream.range(0, 3000).mapToObj(i -> unique("new-" + i)).toList(), null);

            assertTrue(broker.uniqueKeysKept() <= 3001, "the 3,000 expired keys were swept, kept " + broker.uniqueKeysKept());
            assertEquals(liveId, unique.submitUnique(unique("live"), null), "a key still within its period is kept and still deduplicates");
        }
    }
}
