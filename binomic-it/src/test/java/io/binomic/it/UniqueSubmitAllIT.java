package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.JobHandle;
import io.binomic.api.Task;
import io.binomic.api.Uniqueness;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A {@code submitAll} of many unique jobs on a real Redis: one pipeline, not a round trip per job,
 * and every reply within the command timeout, however many jobs the call holds.
 */
class UniqueSubmitAllIT {
    record Item(int n) { }

    private static Task<Item, Void> task(String queue, int keys) {
        return Task.builder("unique-all", Item.class, Void.class).queue(queue)
                .unique(Uniqueness.whileQueued(Duration.ofMinutes(5)), item -> Integer.toString(item.n() % keys)).build();
    }

    private static List<Item> items(int from, int count) {
        return IntStream.range(from, from + count).mapToObj(Item::new).toList();
    }

    @Test
    void aSubmitAllOfUniqueJobsIsOnePipelineAndADuplicateGetsTheFirstJob() {
        int jobs = 400;
        try (RedisServer redis = RedisServer.startNew();
             Binomic producer = Binomic.builder().config(BinomicConfig.builder().brokerUrl(redis.url()).build()).build().start()) {
            String queue = "unique-pipelined-" + System.nanoTime();
            Task<Item, Void> task = task(queue, jobs / 2);
            producer.submitAll(task(queue + "-warm", jobs), items(0, 2)); // the scripts loaded, the connections open
            long reads = reads(redis);
            List<JobHandle<Void>> handles = producer.submitAll(task, items(0, jobs));
            long readsOfTheCall = reads(redis) - reads - 1; // less the INFO that reads them
            System.out.println("UNIQUE submitAll of " + jobs + " jobs: " + readsOfTheCall + " reads by Redis");

            // a round trip per job would be a read per job; one pipeline is read in buffers of 16 KiB or more
            assertTrue(readsOfTheCall < jobs / 10, readsOfTheCall + " reads by Redis for a submitAll of " + jobs + " unique jobs");
            for (int n = 0; n < jobs / 2; n++) {
                assertEquals(handles.get(n).id(), handles.get(n + jobs / 2).id(), "item " + (n + jobs / 2) + " is a duplicate of item " + n);
                assertNotEquals(handles.get(n).id(), handles.get(n + 1).id());
            }
            assertEquals(jobs / 2, producer.queueStats(queue).ready());
        }
    }

    /** Read events Redis has processed (INFO stats total_reads_processed): one per round trip of a client that waits for each reply. */
    private static long reads(RedisServer redis) {
        String stats = String.valueOf(redis.call("INFO", "stats"));
        return stats.lines().filter(l -> l.startsWith("total_reads_processed:")).findFirst()
                .map(l -> Long.parseLong(l.substring("total_reads_processed:".length()).strip())).orElseThrow();
    }

    @Test
    void twentyThousandUniqueJobsInOneCallAreEachEnqueuedOnceWithinATimeoutThatAThousandNeed() {
        String url = RedisServer.shared().url();
        // What a call of 1,000 unique jobs takes here, now (median of 3, warmed up): a timeout of
        // five times that lets each 1,000 through, and not the reply of 20,000 sent as one pipeline.
        long[] nanos = new long[3];
        try (Binomic calibration = Binomic.builder().config(BinomicConfig.builder().brokerUrl(url).build()).build().start()) {
            Task<Item, Void> task = task("unique-calibration-" + System.nanoTime(), Integer.MAX_VALUE);
            calibration.submitAll(task, items(0, 1_000));
            for (int round = 0; round < nanos.length; round++) {
                long started = System.nanoTime();
                calibration.submitAll(task, items((round + 1) * 1_000, 1_000));
                nanos[round] = System.nanoTime() - started;
            }
        }
        Arrays.sort(nanos);
        Duration timeout = Duration.ofNanos(Math.max(nanos[1] * 5, Duration.ofMillis(100).toNanos()));

        String queue = "unique-all-" + System.nanoTime();
        Task<Item, Void> task = task(queue, 15_000);
        BrokerConfig broker = BrokerConfig.builder().url(url).commandTimeout(timeout).build();
        try (Binomic producer = Binomic.builder().config(BinomicConfig.builder().broker(broker).build()).build().start()) {
            List<JobHandle<Void>> handles = producer.submitAll(task, items(0, 20_000));

            assertEquals(20_000, handles.size());
            assertEquals(15_000, new HashSet<>(handles.stream().map(JobHandle::id).toList()).size());
            for (int n = 15_000; n < 20_000; n++) {
                assertEquals(handles.get(n - 15_000).id(), handles.get(n).id(),
                        "item " + n + ", a duplicate key in a later chunk of the same call, gets the earlier job's id");
            }
            assertEquals(15_000, producer.queueStats(queue).ready());
        }
    }
}
