package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobHandle;
import io.binomic.api.QueueStats;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobEvent;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The behaviour every broker with the {@link io.binomic.api.spi.Activity} capability must have: the minute buckets
 * of several processes add up.
 */
public abstract class ActivityContractTest extends BrokerContractFixture {

    protected ActivityContractTest() {
    }

    /**
     * The dashboard's charts: what several processes add to the same minute adds up, the longest
     * run is the longest any of them saw, and a read from a later minute leaves earlier ones out.
     */
    @Test
    void activityOfSeveralProcessesAddsUpPerMinute() {
        Instant thisMinute = io.binomic.api.spi.ActivityBucket.minuteOf(Instant.now());
        Instant before = thisMinute.minusSeconds(120);
        BrokerCapabilities.activity(broker).addActivity(Map.of(queue, List.of(new io.binomic.api.spi.ActivityBucket(before, 5, 1, 1, 0, 6_000_000, 2_000_000),
                new io.binomic.api.spi.ActivityBucket(thisMinute, 3, 0, 0, 1, 3_000_000, 1_500_000))));
        BrokerCapabilities.activity(broker).addActivity(Map.of(queue, List.of(new io.binomic.api.spi.ActivityBucket(thisMinute, 2, 2, 1, 1, 8_000_000, 4_000_000)),
                otherQueue, List.of(new io.binomic.api.spi.ActivityBucket(thisMinute, 100, 0, 0, 0, 1, 1))));

        assertEquals(List.of(new io.binomic.api.spi.ActivityBucket(before, 5, 1, 1, 0, 6_000_000, 2_000_000),
                        new io.binomic.api.spi.ActivityBucket(thisMinute, 5, 2, 1, 2, 11_000_000, 4_000_000)),
                BrokerCapabilities.activity(broker).activity(queue, before.plusSeconds(30)), "two processes' counts of a minute add up; the queue's own only");
        assertEquals(List.of(new io.binomic.api.spi.ActivityBucket(thisMinute, 5, 2, 1, 2, 11_000_000, 4_000_000)),
                BrokerCapabilities.activity(broker).activity(queue, thisMinute), "from a minute on");
        assertTrue(BrokerCapabilities.activity(broker).activity("never-used-" + UUID.randomUUID(), before).isEmpty());
    }
}
