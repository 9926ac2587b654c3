package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.RateLimit;
import io.binomic.api.Task;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A rate limit holds at the handlers through a Redis freeze (SIGSTOP) that catches starts the limit
 * reserved before it: a start whose reserved time passed while Redis did not answer (its start mark
 * waiting) is given back and admitted again, never run on its old admission together with the new
 * ones once Redis answers. Prints a {@code RATE-FREEZE ...} line.
 */
class RateLimitThroughFreezeIT {
    private static final int PER_SECOND = 50;
    private static final int BURST = 5;
    /**
     * What a 1 s window may hold beyond {@code permits + burst}, measured at the handlers: the
     * hand-off flow-control.md allows (a start taken up to 20 ms late, 1 at 50/s) and the lag between
     * a start and its handler's first line on a loaded machine (as {@link LimitsIT#WINDOW_TOLERANCE}).
     */
    private static final int HAND_OFF = 4;

    @Test
    void startsAfterAFreezeFollowTheRateLimitInsteadOfRunningAllTheStartsReservedBeforeIt() throws Exception {
        String queue = "freeze-rate-" + UUID.randomUUID().toString().substring(0, 8);
        Task<Integer, String> task = Task.builder("limited", Integer.class, String.class).queue(queue).maxAttempts(10)
                .rateLimit(RateLimit.perSecond(PER_SECOND).withBurst(BURST)).build();
        Queue starts = new Queue();
        try (RedisServer redis = RedisServer.startNew();
             Binomic binomic = Binomic.builder().config(BinomicConfig.builder().brokerUrl(redis.url()).schedulePeriodicTasks(false)
                             .taskDefaults(TaskDefaults.builder().taskTimeout(Duration.ofSeconds(60)).build())
                             .worker(WorkerConfig.builder().queues(queue).concurrency(20).pollTimeout(Duration.ofMillis(200))
                                     .shutdownGrace(Duration.ofSeconds(2)).build())
                             .build())
                     .handle(task, n -> {
                         starts.add(n);
                         return "ok";
                     }).build().start()) {
            binomic.startWorker();
            int jobs = 900;
            binomic.submitAll(task, IntStream.range(0, jobs).boxed().toList());
            // Two seconds of starts at the limit: the worker holds up to a second of reserved starts when Redis freezes.
            Thread.sleep(2_000);
            long frozeAt = System.nanoTime();
            redis.freezeFor(Duration.ofSeconds(8));
            long thawedAt = System.nanoTime();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (starts.distinct() < jobs && System.nanoTime() < deadline) {
                Thread.sleep(200);
            }
            long[] at = starts.times();
            int maxWindow = 0;
            long worstAt = 0;
            for (int i = 0, j = 0; i < at.length; i++) {
                while (j < at.length && at[j] < at[i] + TimeUnit.SECONDS.toNanos(1)) {
                    j++;
                }
                if (j - i > maxWindow) {
                    maxWindow = j - i;
                    worstAt = at[i];
                }
            }
            int[] perTenthAfterThaw = new int[60];
            for (long t : at) {
                long b = (t - thawedAt) / 100_000_000L;
                if (t >= thawedAt && b < perTenthAfterThaw.length) {
                    perTenthAfterThaw[(int) b]++;
                }
            }
            long duringFreeze = Arrays.stream(at).filter(t -> t >= frozeAt + TimeUnit.SECONDS.toNanos(1) && t < thawedAt).count();
            int bound = PER_SECOND + BURST + HAND_OFF;
            System.out.println("RATE-FREEZE limit=" + PER_SECOND + "/s burst=" + BURST + " starts=" + at.length + " distinct="
                    + starts.distinct() + " max_in_any_1s_window=" + maxWindow + " (bound " + bound + ", worst window begins "
                    + TimeUnit.NANOSECONDS.toMillis(worstAt - thawedAt) + " ms after the thaw) starts_per_100ms_after_thaw="
                    + Arrays.toString(perTenthAfterThaw) + " starts_during_freeze_after_1s=" + duringFreeze);
            assertEquals(jobs, starts.distinct(), "every job ran");
            assertTrue(maxWindow <= bound, "at most " + PER_SECOND + " + " + BURST + " (+" + HAND_OFF
                    + ") starts in any 1 s window, through a Redis freeze; saw " + maxWindow + ", the worst window beginning "
                    + TimeUnit.NANOSECONDS.toMillis(worstAt - thawedAt) + " ms after the thaw");
        }
    }

    /** The handlers' starts ({@link System#nanoTime()}), and which jobs ran. */
    private static final class Queue {
        private final ConcurrentLinkedQueue<Long> times = new ConcurrentLinkedQueue<>();
        private final Map<Integer, AtomicInteger> runs = new ConcurrentHashMap<>();

        void add(int n) {
            times.add(System.nanoTime());
            runs.computeIfAbsent(n, k -> new AtomicInteger()).incrementAndGet();
        }

        int distinct() { return runs.size(); }

        long[] times() {
            List<Long> sorted = new ArrayList<>(times);
            return sorted.stream().mapToLong(Long::longValue).sorted().toArray();
        }
    }
}
