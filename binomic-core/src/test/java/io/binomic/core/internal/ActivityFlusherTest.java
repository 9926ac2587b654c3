package io.binomic.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.ActivityBucket;
import io.binomic.core.BrokerCapabilities;
import io.binomic.core.ForwardingBroker;
import io.binomic.core.internal.memory.MemoryBroker;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The counts behind the dashboard's charts: each flush carries what was counted since the last
 * one, and what a broker outage kept from being written is sent, in its own minute, once it is back.
 */
class ActivityFlusherTest {
    /** A minute a little while ago: the memory broker forgets buckets older than two hours by its own clock. */
    private static final Instant MINUTE = ActivityBucket.minuteOf(Instant.now()).minusSeconds(300);

    @Test
    void eachReadCarriesOnlyWhatWasCountedSinceTheLast() {
        StatsRecorder stats = new StatsRecorder();
        stats.succeeded("mail", "send", 3_000_000);
        stats.succeeded("mail", "send", 5_000_000);
        stats.failed("mail", "bounce", 1_000_000);
        stats.retried("mail", "bounce");
        stats.deadLettered("reports", "build");

        Map<String, ActivityBucket> first = stats.activitySinceLastCall(MINUTE.plusSeconds(42));
        assertEquals(Map.of("mail", new ActivityBucket(MINUTE, 2, 1, 1, 0, 9_000_000, 5_000_000),
                "reports", new ActivityBucket(MINUTE, 0, 0, 0, 1, 0, 0)), first, "tasks of a queue add up, in the minute of the read");

        stats.succeeded("mail", "send", 2_000_000);
        assertEquals(Map.of("mail", new ActivityBucket(MINUTE.plusSeconds(60), 1, 0, 0, 0, 2_000_000, 2_000_000)),
                stats.activitySinceLastCall(MINUTE.plusSeconds(61)), "only what is new; the longest run since the last read");
        assertTrue(stats.activitySinceLastCall(MINUTE.plusSeconds(62)).isEmpty(), "nothing new, nothing to write");
    }

    @Test
    void countsABrokerCouldNotStoreAreSentWithTheNextFlush() {
        MemoryBroker memory = new MemoryBroker(BrokerConfig.defaults());
        boolean[] down = {true};
        ForwardingBroker broker = new ForwardingBroker(memory) {
            @Override
            public void addActivity(Map<String, List<ActivityBucket>> byQueue) {
                if (down[0]) {
                    throw new io.binomic.api.BrokerException("Redis is down");
                }
                super.addActivity(byQueue);
            }
        };
        StatsRecorder stats = new StatsRecorder();
        Instant[] now = {MINUTE.plusSeconds(10)};
        ActivityFlusher flusher = new ActivityFlusher(stats, broker, new Clock() {
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
                return now[0];
            }
        });
        stats.succeeded("mail", "send", 1_000_000);
        assertFalse(flusher.flush(), "the broker is down");
        now[0] = MINUTE.plusSeconds(70);
        stats.succeeded("mail", "send", 1_000_000);
        down[0] = false;
        assertTrue(flusher.flush());

        assertEquals(List.of(new ActivityBucket(MINUTE, 1, 0, 0, 0, 1_000_000, 1_000_000),
                        new ActivityBucket(MINUTE.plusSeconds(60), 1, 0, 0, 0, 1_000_000, 1_000_000)),
                BrokerCapabilities.activity(memory).activity("mail", MINUTE), "nothing lost, each count in its own minute");
        assertTrue(flusher.flush(), "and nothing sent twice");
        assertEquals(2, BrokerCapabilities.activity(memory).activity("mail", MINUTE).stream().mapToLong(ActivityBucket::succeeded).sum());
    }
}
