package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.DeadLetter;
import io.binomic.api.DeadLetterFilter;
import io.binomic.api.JobHandle;
import io.binomic.api.spi.Message;
import io.binomic.api.QueueLimits;
import io.binomic.api.QueueStats;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.Uniqueness;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.Providers;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Partitioned queues, the same on every broker: submits spread over the partitions (round robin,
 * or by key), a worker reads every partition fairly within its concurrency, stats and dead letters
 * of the queue are those of all its partitions, and lowering the count drains the partitions left
 * behind instead of stranding them.
 */
public abstract class PartitionContractTest {

    record Item(int n) { }

    protected PartitionContractTest() {
    }

    /** The broker URL the instances use. */
    protected abstract String brokerUrl();

    private final String queue = "parts-" + UUID.randomUUID().toString().substring(0, 8);
    private final Task<Item, String> work = Task.builder("work", Item.class, String.class).queue(queue).maxAttempts(1).build();
    private final List<Binomic> opened = new ArrayList<>();
    /** Handled jobs in the order their handler started, and the partition each came from. */
    protected final List<Integer> handled = new CopyOnWriteArrayList<>();
    private final Map<Integer, String> partitionOf = new ConcurrentHashMap<>();
    private final AtomicInteger running = new AtomicInteger();
    private final AtomicInteger mostRunning = new AtomicInteger();
    private final AtomicBoolean failing = new AtomicBoolean();
    private final Set<String> contextQueues = ConcurrentHashMap.newKeySet();

    @AfterEach
    void closeAll() {
        opened.forEach(Binomic::close);
    }

    /** The queue of the test (its partitions are named after it). */
    protected String queue() {
        return queue;
    }

    /** An instance with the handler of {@link #work}, its worker not started. */
    protected Binomic started(int concurrency) {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(brokerUrl())
                .worker(WorkerConfig.builder().queues(queue).concurrency(concurrency).pollTimeout(Duration.ofMillis(200))
                        .shutdownGrace(Duration.ofSeconds(2)).build())
                .build();
        Binomic binomic = Binomic.builder().config(config).handle(work, this::handle).build().start();
        opened.add(binomic);
        return binomic;
    }

    private String handle(Item item) throws InterruptedException {
        int now = running.incrementAndGet();
        mostRunning.accumulateAndGet(now, Math::max);
        try {
            contextQueues.add(TaskContext.current().queue());
            handled.add(item.n());
            Thread.sleep(5);
            if (failing.get()) {
                throw new IllegalStateException("failing " + item.n());
            }
            return "done" + item.n();
        } finally {
            running.decrementAndGet();
        }
    }

    /** Submits items {@code from..to-1}, remembering the partition of each. */
    protected List<JobHandle<String>> submit(Binomic binomic, int from, int to) {
        List<Item> items = new ArrayList<>();
        for (int i = from; i < to; i++) {
            items.add(new Item(i));
        }
        List<JobHandle<String>> jobs = binomic.submitAll(work, items);
        for (int i = 0; i < jobs.size(); i++) {
            partitionOf.put(from + i, jobs.get(i).queue());
        }
        return jobs;
    }

    private static Map<String, Integer> countByQueue(List<JobHandle<String>> jobs) {
        Map<String, Integer> counts = new TreeMap<>();
        jobs.forEach(j -> counts.merge(j.queue(), 1, Integer::sum));
        return counts;
    }

    private static void awaitAll(List<JobHandle<String>> jobs) {
        for (JobHandle<String> j : jobs) {
            j.await(Duration.ofSeconds(30));
        }
    }

    /** The store behind the feature, on a broker of {@link #brokerUrl()} of its own. */
    @Test
    void partitionsAreStoredPerQueueAndAPartitionIsAQueueOfItsOwnAtEveryPriority() throws Exception {
        String otherQueue = queue + "-other";
        try (Broker broker = Providers.createBroker(BrokerConfig.builder().url(brokerUrl()).build())) {
            broker.start(List.of(queue, otherQueue));
            Partitioning partitioning = BrokerCapabilities.partitioning(broker);
            assertEquals(Map.of(), partitioning.partitions(List.of(queue, otherQueue)));
            partitioning.setPartitions(queue, new QueuePartitions(3, 4));
            assertEquals(Map.of(queue, new QueuePartitions(3, 4)), partitioning.partitions(List.of(queue, otherQueue)));

            // partitions 0 and 3, at the default priority and at another: fetched, renewed and settled
            // on their own streams ('@' in a physical queue's name clashes with nothing)
            String last = QueuePartitions.physical(queue, 3);
            List<Message> sent = new ArrayList<>();
            for (String q : List.of(queue, last)) {
                sent.add(BrokerContractFixture.message(q, "t", "{}", 1));
                sent.add(BrokerContractFixture.message(q, "t", "{}", 1).toBuilder().priority(8).build());
            }
            broker.enqueueAll(sent);
            List<Delivery> got = new ArrayList<>();
            for (int round = 0; round < 10 && got.size() < 4; round++) {
                got.addAll(broker.fetch(List.of(queue, last), "c1", 4, Duration.ofMillis(100)));
            }
            assertEquals(4, got.size());
            assertEquals(2, got.stream().filter(d -> d.queue().equals(last)).count());
            broker.renewLeases("c1", got);
            assertEquals(List.of(), broker.settle("c1", got.stream().<Settlement>map(Settlement.Ack::new).toList()).notApplied());
            assertEquals(0, broker.stats(last).pending());
            assertEquals(0, broker.stats(queue).pending());

            partitioning.setPartitions(queue, QueuePartitions.ONE);
            assertEquals(Map.of(), partitioning.partitions(List.of(queue)), "one partition is no partitioning");
        }
    }

    @Test
    void submitsSpreadRoundRobinAndAKeyKeepsItsJobsInOnePartition() {
        Binomic binomic = started(1);
        assertEquals(QueuePartitions.ONE, binomic.queues().partitions(queue));
        assertEquals(new QueuePartitions(3, 3), binomic.queues().setPartitions(queue, 3));
        assertEquals(new QueuePartitions(3, 3), binomic.queues().partitions(queue));

        List<JobHandle<String>> jobs = submit(binomic, 0, 30);
        assertEquals(Map.of(queue, 10, queue + "@1", 10, queue + "@2", 10), countByQueue(jobs), "round robin over the 3 partitions");
        jobs.add(binomic.submit(work, new Item(30)));
        assertEquals(31, binomic.queueStats(queue).ready(), "the queue's stats are those of all its partitions");
        assertEquals(queue, binomic.queueStats(queue).queue());

        Set<String> keyed = new HashSet<>();
        Set<String> anyKey = new HashSet<>();
        for (int i = 0; i < 12; i++) {
            keyed.add(binomic.submit(work, new Item(100 + i), SubmitOptions.builder().partitionKey("account-7").build()).queue());
            anyKey.add(binomic.submit(work, new Item(200 + i), SubmitOptions.builder().partitionKey("account-" + i).build()).queue());
        }
        assertEquals(1, keyed.size(), "one key, one partition: " + keyed);
        assertTrue(anyKey.size() > 1, "keys spread over the partitions: " + anyKey);
        assertEquals(55, binomic.queueStats(queue).ready());
        // a job handle found by id alone, in whichever partition it is
        JobHandle<String> last = jobs.getLast();
        assertEquals(last.queue(), binomic.job(queue, last.id()).queue());
    }

    @Test
    void theJobsAddedToABatchSpreadRoundRobinOverThePartitions() {
        Binomic binomic = started(1);
        binomic.queues().setPartitions(queue, 3);
        BatchHandle batch = binomic.batch().keepOpen().submit();
        Map<String, Integer> counts = new TreeMap<>();
        for (int i = 0; i < 9; i++) {
            UUID id = batch.add(work, new Item(i));
            counts.merge(binomic.job(queue, id).queue(), 1, Integer::sum);
        }
        assertEquals(Map.of(queue, 3, queue + "@1", 3, queue + "@2", 3), counts);
    }

    @Test
    void aWorkerReadsEveryPartitionFairlyAndNeverRunsMoreThanItsConcurrency() {
        Binomic binomic = started(2);
        binomic.queues().setPartitions(queue, 4);
        List<JobHandle<String>> jobs = submit(binomic, 0, 40);
        binomic.startWorker();
        awaitAll(jobs);
        assertEquals(40, handled.size());
        assertTrue(mostRunning.get() <= 2, "at most the worker's concurrency ran at once: " + mostRunning.get());
        Set<String> firstHalf = new HashSet<>();
        handled.subList(0, 20).forEach(n -> firstHalf.add(partitionOf.get(n)));
        assertEquals(4, firstHalf.size(), "the first 20 jobs came from every partition, not one partition after the other: " + firstHalf);
        assertEquals(Set.of(queue), contextQueues, "a handler sees the queue's own name");
        QueueStats stats = binomic.queueStats(queue);
        assertEquals(0, stats.ready() + stats.pending() + stats.delayed(), stats.toString());
        assertTrue(binomic.taskStats().stream().allMatch(s -> s.queue().equals(queue)), "execution stats count under the queue");
    }

    @Test
    void deadLettersOfAllPartitionsAreListedFoundAndReplayedUnderTheQueuesName() throws Exception {
        Binomic binomic = started(4);
        binomic.queues().setPartitions(queue, 3);
        failing.set(true);
        List<JobHandle<String>> jobs = submit(binomic, 0, 6);
        binomic.startWorker();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (binomic.queueStats(queue).deadLetters() < 6 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertEquals(6, binomic.queueStats(queue).deadLetters(), "the queue's dead letters are those of all its partitions");
        assertEquals(6, binomic.deadLetters().count(queue, DeadLetterFilter.all()));
        List<DeadLetter> letters = binomic.deadLetters().list(queue, DeadLetterFilter.all(), 100);
        assertEquals(6, letters.size());
        assertTrue(letters.stream().allMatch(l -> l.queue().equals(queue)), "listed under the queue's name");
        assertEquals(3, letters.stream().map(l -> l.id().contains("@") ? l.id().substring(l.id().indexOf('@')) : "").distinct().count(),
                "ids tell the partitions apart: " + letters);
        assertEquals(6, binomic.deadLetters().groups(queue).getFirst().count());
        DeadLetter inPartition2 = letters.stream().filter(l -> l.id().endsWith("@2")).findFirst().orElseThrow();
        assertEquals(inPartition2.id(), binomic.deadLetters().find(queue, inPartition2.id()).orElseThrow().id());

        failing.set(false);
        assertTrue(binomic.deadLetters().replayOne(queue, inPartition2.id()));
        assertEquals(5, binomic.deadLetters().replay(queue, DeadLetterFilter.all()));
        awaitAll(jobs);
        assertEquals(0, binomic.deadLetters().count(queue, DeadLetterFilter.all()));
    }

    @Test
    void loweringTheCountDrainsThePartitionsLeftBehindAndAgainOnceEmptyForgetsThem() throws Exception {
        Binomic binomic = started(4);
        binomic.queues().setPartitions(queue, 4);
        List<JobHandle<String>> before = submit(binomic, 0, 20);
        assertEquals(4, countByQueue(before).size());

        assertEquals(new QueuePartitions(2, 4), binomic.queues().setPartitions(queue, 2), "workers still read 4");
        List<JobHandle<String>> after = submit(binomic, 20, 30);
        assertEquals(Set.of(queue, queue + "@1"), countByQueue(after).keySet(), "producers write to 2 partitions only");
        assertEquals(new QueuePartitions(2, 4), binomic.queues().setPartitions(queue, 2), "not forgotten while they hold messages");

        binomic.startWorker();
        awaitAll(before);
        awaitAll(after);
        assertEquals(30, new HashSet<>(handled).size(), "every job ran, those of the partitions left behind too");
        Thread.sleep(300); // their settlements land
        assertEquals(new QueuePartitions(2, 2), binomic.queues().setPartitions(queue, 2), "empty now: forgotten");
        assertEquals(new QueuePartitions(1, 2), binomic.queues().setPartitions(queue, 1));
    }

    @Test
    void raisingTheCountOnARunningWorkerIsPickedUpWithinAboutASecond() {
        Binomic binomic = started(2);
        binomic.startWorker();
        assertEquals("done0", binomic.submit(work, new Item(0)).await(Duration.ofSeconds(20)));
        binomic.queues().setPartitions(queue, 3);
        List<JobHandle<String>> jobs = submit(binomic, 1, 13);
        assertEquals(3, countByQueue(jobs).size());
        awaitAll(jobs);
    }

    @Test
    void limitsAndPartitionsAreRefusedTogetherAndAUniqueJobStaysInPartitionZeroAcrossAChangeOfTheCount() {
        Binomic binomic = started(1);
        binomic.queues().setLimits(queue, QueueLimits.builder().concurrencyLimit(2).build());
        IllegalArgumentException limited = assertThrows(IllegalArgumentException.class, () -> binomic.queues().setPartitions(queue, 2));
        assertTrue(limited.getMessage().contains("remove them first (binomic queue limit " + queue + " --none)"), limited.getMessage());
        binomic.queues().setLimits(queue, QueueLimits.NONE);
        binomic.queues().setPartitions(queue, 3);
        IllegalArgumentException partitioned = assertThrows(IllegalArgumentException.class,
                () -> binomic.queues().setLimits(queue, QueueLimits.builder().concurrencyLimit(2).build()));
        assertTrue(partitioned.getMessage().contains("is partitioned"), partitioned.getMessage());
        Task<Item, String> limitedTask = Task.builder("limited", Item.class, String.class).queue(queue).concurrencyLimit(1).build();
        IllegalArgumentException task = assertThrows(IllegalArgumentException.class, () -> binomic.submit(limitedTask, new Item(1)));
        assertTrue(task.getMessage().contains("has rate or concurrency limits"), task.getMessage());
        assertThrows(IllegalArgumentException.class, () -> binomic.queues().setPartitions(queue, QueuePartitions.MAX + 1));

        SubmitOptions unique = SubmitOptions.builder().unique(Uniqueness.whileQueued(Duration.ofMinutes(1)), "order-9").build();
        JobHandle<String> first = binomic.submit(work, new Item(1), unique);
        for (int i = 0; i < 5; i++) {
            JobHandle<String> again = binomic.submit(work, new Item(2 + i), unique);
            assertEquals(first.id(), again.id(), "a duplicate finds the key's claim in its partition");
            assertEquals(first.queue(), again.queue());
        }
        assertEquals(1, binomic.queueStats(queue).ready());
        assertEquals(queue, first.queue(), "unique jobs live in partition 0");
        binomic.queues().setPartitions(queue, 5);
        assertEquals(first.id(), binomic.submit(work, new Item(8), unique).id(),
                "a change of the count does not move the key: its duplicate still finds the claim (it ran twice when keys were hashed)");
        assertEquals(1, binomic.queueStats(queue).ready());
        IllegalArgumentException keyed = assertThrows(IllegalArgumentException.class, () -> binomic.submit(work, new Item(9),
                unique.toBuilder().partitionKey("x").build()));
        assertTrue(keyed.getMessage().contains("leave SubmitOptions.partitionKey out"), keyed.getMessage());
        assertFalse(binomic.queues().partitions(queue).count() == 1);
    }
}
