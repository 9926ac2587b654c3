package io.binomic.core.internal.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.binomic.api.CronExpression;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

class PeriodicSchedulerTest {
    private static final Duration AWAIT = Duration.ofSeconds(5);
    private static final Trigger EVERY_100_MS = Trigger.every(Duration.ofMillis(100));

    /** A clock that stands still until the test moves it, and counts how often it is read. */
    private static final class ManualClock extends Clock {
        private volatile Instant now;
        private final AtomicLong reads = new AtomicLong();

        ManualClock(Instant start) {
            this.now = start;
        }

        void advance(Duration duration) {
            now = now.plus(duration);
        }

        long reads() {
            return reads.get();
        }

        @Override
        public Instant instant() {
            reads.incrementAndGet();
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            throw new UnsupportedOperationException();
        }
    }

    private static void await(String what, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + AWAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("timed out after " + AWAIT + " waiting for " + what);
            }
            Thread.sleep(10);
        }
    }

    /** Waits until the job thread has read the clock, i.e. has computed its first due tick. */
    private static void awaitJobStarted(ManualClock clock) throws InterruptedException {
        long before = clock.reads();
        await("the job to read the clock", () -> clock.reads() > before + 1);
    }

    @Test
    void firesAnIntervalTriggerRepeatedlyWithStrictlyIncreasingTicks() throws Exception {
        List<Instant> ticks = new CopyOnWriteArrayList<>();
        List<Instant> firedAt = new CopyOnWriteArrayList<>();
        try (PeriodicScheduler scheduler = new PeriodicScheduler(Clock.systemUTC())) {
            scheduler.schedule("heartbeat", EVERY_100_MS, tick -> {
                firedAt.add(Instant.now());
                ticks.add(tick);
            });
            await("5 ticks", () -> ticks.size() >= 5);
        }
        for (int i = 1; i < ticks.size(); i++) {
            assertTrue(ticks.get(i).isAfter(ticks.get(i - 1)), "ticks not increasing: " + ticks);
        }
        for (int i = 0; i < ticks.size(); i++) {
            assertEquals(0, ticks.get(i).toEpochMilli() % 100, "tick off the 100 ms grid: " + ticks.get(i));
            assertFalse(firedAt.get(i).isBefore(ticks.get(i)), "fired before its tick: " + ticks.get(i));
        }
    }

    @Test
    void lateTicksAreCoalescedIntoOneFireForTheLatestDueTick() throws Exception {
        Instant start = Instant.parse("2026-01-01T00:00:00Z");
        ManualClock clock = new ManualClock(start);
        List<Instant> ticks = new CopyOnWriteArrayList<>();
        try (PeriodicScheduler scheduler = new PeriodicScheduler(clock)) {
            scheduler.schedule("coalesce", EVERY_100_MS, ticks::add);
            awaitJobStarted(clock);

            clock.advance(Duration.ofMillis(550)); // ticks +100 .. +500 are all due now
            await("the coalesced fire", () -> !ticks.isEmpty());
            Thread.sleep(300); // a second fire for the same jump would show up here
            assertEquals(List.of(start.plusMillis(500)), ticks);

            clock.advance(Duration.ofMillis(100));
            await("the next tick", () -> ticks.size() == 2);
            assertEquals(List.of(start.plusMillis(500), start.plusMillis(600)), ticks);
        }
    }

    @Test
    void ticksOverrunByALongActionFireOnceRightAfterItInsteadOfBeingSkipped() throws Exception {
        Instant start = Instant.parse("2026-01-01T00:00:00Z");
        ManualClock clock = new ManualClock(start);
        List<Instant> ticks = new CopyOnWriteArrayList<>();
        try (PeriodicScheduler scheduler = new PeriodicScheduler(clock)) {
            scheduler.schedule("slow", EVERY_100_MS, tick -> {
                if (ticks.isEmpty()) {
                    clock.advance(Duration.ofMillis(250)); // the first run lasts past ticks +200 and +300
                }
                ticks.add(tick);
            });
            awaitJobStarted(clock);

            clock.advance(Duration.ofMillis(100));
            await("the overrun ticks to be coalesced", () -> ticks.size() == 2);
            Thread.sleep(300); // a fire for +200 or a repeat would show up here
            assertEquals(List.of(start.plusMillis(100), start.plusMillis(300)), ticks);
        }
    }

    @Test
    void cronTriggerFiresAtItsTickAfterAClockJump() throws Exception {
        Instant start = Instant.parse("2026-01-01T10:00:30Z");
        ManualClock clock = new ManualClock(start);
        List<Instant> ticks = new CopyOnWriteArrayList<>();
        try (PeriodicScheduler scheduler = new PeriodicScheduler(clock)) {
            scheduler.schedule("hourly", Trigger.cron(CronExpression.parse("@hourly"), ZoneOffset.UTC), ticks::add);
            awaitJobStarted(clock);
            clock.advance(Duration.ofHours(3)); // 11:00, 12:00 and 13:00 are due: 13:00 fires
            await("the cron tick", () -> !ticks.isEmpty());
        }
        assertEquals(List.of(Instant.parse("2026-01-01T13:00:00Z")), ticks);
    }

    @Test
    void aFailingActionDoesNotStopTheJob() throws Exception {
        AtomicInteger attempts = new AtomicInteger();
        try (PeriodicScheduler scheduler = new PeriodicScheduler(Clock.systemUTC())) {
            scheduler.schedule("failing", EVERY_100_MS, tick -> {
                attempts.incrementAndGet();
                throw new IllegalStateException("boom at " + tick);
            });
            await("3 attempts despite failures", () -> attempts.get() >= 3);
        }
    }

    @Test
    void closeStopsFiring() throws Exception {
        AtomicInteger fires = new AtomicInteger();
        PeriodicScheduler scheduler = new PeriodicScheduler(Clock.systemUTC());
        scheduler.schedule("a", Trigger.every(Duration.ofMillis(50)), tick -> fires.incrementAndGet());
        scheduler.schedule("b", Trigger.every(Duration.ofMillis(50)), tick -> fires.incrementAndGet());
        await("both jobs to fire", () -> fires.get() >= 4);
        scheduler.close();
        int afterClose = fires.get();
        Thread.sleep(300);
        assertEquals(afterClose, fires.get());
    }

    @Test
    void closeInterruptsARunningActionPromptly() throws Exception {
        CountDownLatch running = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        PeriodicScheduler scheduler = new PeriodicScheduler(Clock.systemUTC());
        scheduler.schedule("slow", EVERY_100_MS, tick -> {
            running.countDown();
            try {
                Thread.sleep(Duration.ofMinutes(1));
            } catch (InterruptedException e) {
                interrupted.set(true);
                throw e;
            }
        });
        assertTrue(running.await(AWAIT.toSeconds(), TimeUnit.SECONDS));
        assertTimeoutPreemptively(Duration.ofSeconds(2), scheduler::close);
        assertTrue(interrupted.get());
    }

    @Test
    void closeIsIdempotentAndScheduleAfterCloseIsRejected() {
        PeriodicScheduler scheduler = new PeriodicScheduler(Clock.systemUTC());
        scheduler.close();
        scheduler.close();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> scheduler.schedule("late", EVERY_100_MS, tick -> { }));
        assertEquals("scheduler is closed: cannot schedule job 'late'; schedule jobs before closing the scheduler",
                e.getMessage());
    }

    @Test
    void latestDueTickFindsTheLastTickBeforeALongPauseWithoutWalkingEveryTick() {
        AtomicLong calls = new AtomicLong();
        Trigger everyMilli = Trigger.every(Duration.ofMillis(1));
        Trigger counting = after -> {
            calls.incrementAndGet();
            return everyMilli.nextAfter(after);
        };
        Instant due = Instant.parse("2026-01-01T00:00:00.001Z");
        Instant now = Instant.parse("2026-01-02T00:00:00.000500Z"); // a day later, mid-millisecond
        assertEquals(Instant.parse("2026-01-02T00:00:00Z"), PeriodicScheduler.latestDueTick(counting, due, now));
        assertTrue(calls.get() < 100, "trigger called " + calls.get() + " times");
        assertEquals(due, PeriodicScheduler.latestDueTick(everyMilli, due, due.plusNanos(999_999)));
        assertEquals(due.plusMillis(1), PeriodicScheduler.latestDueTick(everyMilli, due, due.plusMillis(1)));
    }
}
