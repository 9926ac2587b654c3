package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.core.internal.client.PeriodicFirer;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import io.binomic.core.internal.schedule.Trigger;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Periodic tasks through the client, and record arguments through the default JSON codec. */
class PeriodicAndJsonTest {

    record Order(String id, List<Line> lines, Instant placedAt) { }

    record Line(String sku, int quantity, double price) { }

    private static BinomicConfig config() {
        return BinomicConfig.builder().worker(WorkerConfig.builder().pollTimeout(Duration.ofMillis(100)).build()).build();
    }

    @Test
    void intervalTaskFiresEveryPeriod() throws Exception {
        AtomicInteger fired = new AtomicInteger();
        Task<Void, Void> tick = Task.builder("tick").interval(Duration.ofMillis(300)).build();
        try (Binomic binomic = Binomic.builder().config(config()).handle(tick, () -> { fired.incrementAndGet(); }).build().start()) {
            binomic.startWorker();
            WorkerTest.await("three ticks ran", () -> fired.get() >= 3);
        }
    }

    @Test
    void twoClientsWithTheSameScheduleEnqueueEachTickOnce() throws Exception {
        List<Instant> ticks = new CopyOnWriteArrayList<>();
        Broker shared = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        Task<Void, Void> report = Task.builder("report").interval(Duration.ofMillis(200)).build();
        Task<Void, Void> sameReport = Task.builder("report").interval(Duration.ofMillis(200)).build();
        Binomic first = Binomic.builder().config(config()).task(report).broker(shared).build().start();
        Binomic second = Binomic.builder().config(config()).task(sameReport).broker(shared).build().start();
        try {
            Thread.sleep(1500);
            // A loaded machine fires fewer ticks in 1.5 s: wait for enough of them, however long that takes.
            WorkerTest.await("four ticks enqueued", () -> shared.stats("default").ready() >= 4);
            first.close();
            second.close();
            for (var d : shared.fetch(List.of("default"), "inspector", 1000, Duration.ofMillis(100))) {
                ticks.add(Instant.parse(d.message().orElseThrow().userHeaders().get("tick")));
            }
        } finally {
            first.close();
            second.close();
        }
        assertTrue(ticks.size() >= 4, "expected at least 4 ticks, got " + ticks.size());
        assertEquals(ticks.size(), ticks.stream().distinct().count(), "a tick was enqueued twice: " + ticks);
    }

    /**
     * One client's clock runs 10 minutes ahead. The broker judges ticks by its own clock, so that
     * client fires nothing early, and the correct client's ticks all fire (before, the fast client
     * claimed a tick 10 minutes ahead and every earlier tick of the correct one was refused).
     */
    @Test
    void aClientWhoseClockRunsAheadNeitherFiresEarlyNorBlocksTheOthers() throws Exception {
        Broker shared = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        Task<Void, Void> report = Task.builder("report").interval(Duration.ofMillis(200)).build();
        Task<Void, Void> sameReport = Task.builder("report").interval(Duration.ofMillis(200)).build();
        Clock ahead = Clock.offset(Clock.systemUTC(), Duration.ofMinutes(10));
        Instant start = Instant.now();
        Binomic fast = Binomic.builder().config(config()).task(sameReport).broker(shared).clock(ahead).build().start();
        Binomic correct = Binomic.builder().config(config()).task(report).broker(shared).build().start();
        List<Instant> ticks = new ArrayList<>();
        Instant end;
        try {
            Thread.sleep(1500);
            WorkerTest.await("five ticks enqueued", () -> shared.stats("default").ready() >= 5);
            end = Instant.now();
            for (var d : shared.fetch(List.of("default"), "inspector", 1000, Duration.ofMillis(100))) {
                ticks.add(Instant.parse(d.message().orElseThrow().userHeaders().get("tick")));
            }
        } finally {
            fast.close();
            correct.close();
        }
        assertTrue(ticks.stream().noneMatch(t -> t.isAfter(end)), "ticks fired before their time: " + ticks);
        assertTrue(ticks.size() >= 5, "expected at least 5 ticks (none blocked), got " + ticks.size() + ": " + ticks);
        assertEquals(ticks.size(), ticks.stream().distinct().count(), "a tick was enqueued twice: " + ticks);
        assertTrue(ticks.stream().allMatch(t -> t.isAfter(start)), ticks.toString());
    }

    @Test
    void aTickClaimLivesSeveralPeriodsAndAtLeastAMinute() {
        Instant tick = Instant.parse("2026-11-30T10:00:00Z");
        assertEquals(Duration.ofMinutes(1), PeriodicFirer.claimLifetime(Trigger.every(Duration.ofMillis(200)), tick));
        assertEquals(Duration.ofHours(3), PeriodicFirer.claimLifetime(Trigger.every(Duration.ofHours(1)), tick));
    }

    @Test
    void recordArgumentsTravelAsJsonAndArriveEqual() throws Exception {
        List<Order> received = new CopyOnWriteArrayList<>();
        Task<Order, Integer> place = Task.builder("place-order", Order.class, Integer.class).build();
        Order order = new Order("o-1", List.of(new Line("sku-é", 2, 9.99), new Line("sku-\"2\"", 1, 0.5)),
                Instant.parse("2026-11-30T10:15:30.123Z"));
        try (Binomic binomic = Binomic.builder().config(config()).handle(place, o -> {
            received.add(o);
            return o.lines().size();
        }).build().start()) {
            Worker worker = binomic.startWorker();
            JobHandle<Integer> job = binomic.submit(place, order, Map.of());
            WorkerTest.await("order processed", () -> worker.counters().succeeded() == 1);
            assertEquals(2, job.await(Duration.ofSeconds(20)), "the result travels back as JSON too");
        }
        assertEquals(List.of(order), received);
    }
}
