package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.NotReplicatedException;
import io.binomic.api.Task;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Settlement;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.it.TestApp.Job;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Broker option {@code wait.replicas}: what a write that too few replicas confirm means to its
 * caller. The replica is killed (the primary stays up, so there is no failover), then brought back.
 */
class ReplicaWaitIT {
    private static final Map<String, String> WAIT_ONE = Map.of("wait.replicas", "1", "wait.timeout", "200ms");
    private RedisSentinelSet set;
    private RedisSentinelSet.Node primary;
    private RedisSentinelSet.Node replica;
    private String queue;

    @BeforeEach
    void start() {
        set = RedisSentinelSet.start();
        primary = set.primary();
        replica = set.nodes().stream().filter(n -> n != primary).findFirst().orElseThrow();
        queue = "wait-" + UUID.randomUUID().toString().substring(0, 8);
    }

    @AfterEach
    void stop() {
        if (set != null) {
            set.close();
        }
    }

    private Message message() {
        return Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "{}".getBytes(StandardCharsets.UTF_8), Map.of());
    }

    private long streamLength() {
        return (Long) set.call(primary, "XLEN", "binomic:{" + queue + "}:stream");
    }

    @Test
    void anEnqueueNoReplicaConfirmsFailsSayingItIsOnThePrimaryOnlyAndMayBeDuplicatedByARetry() throws Exception {
        try (Broker broker = Brokers.redisProvider().create(BrokerConfig.builder().url(primary.url()).options(WAIT_ONE).build())) {
            broker.start(List.of(queue));
            broker.enqueue(message());
            List<Delivery> fetched = broker.fetch(List.of(queue), "c1", 10, Duration.ofMillis(100));
            set.kill(replica);

            NotReplicatedException single = assertThrows(NotReplicatedException.class, () -> broker.enqueue(message()));
            NotReplicatedException bulk = assertThrows(NotReplicatedException.class,
                    () -> broker.enqueueAll(List.of(message(), message())));
            NotReplicatedException settle = assertThrows(NotReplicatedException.class,
                    () -> broker.settle("c1", List.of(new Settlement.Ack(fetched.getFirst()))));

            assertTrue(single.getMessage().contains("enqueue on queue '" + queue + "' at " + primary
                    + " was written to the primary, but only 0 of the 1 replicas required (BrokerConfig option wait.replicas)"
                    + " confirmed it within 200 ms (wait.timeout): it may or may not survive a failover; a job submitted again"
                    + " is a second job, with a new message id, unless its task or submit has a unique key (Task.Builder.unique,"
                    + " SubmitOptions.Builder.unique)"), single.getMessage());
            assertEquals(0, single.confirmed());
            assertEquals(1, single.required());
            assertTrue(bulk.getMessage().contains("enqueueAll (messages 0 to 2 of 2)"), bulk.getMessage());
            assertTrue(settle.getMessage().contains("the worker sends the outcomes again"), settle.getMessage());
            assertEquals(4, streamLength(), "every write is on the primary; only the confirmation is missing");
            assertEquals(0L, ((List<?>) set.call(primary, "XPENDING", "binomic:{" + queue + "}:stream", "binomic")).getFirst(),
                    "the ack is applied on the primary");

            set.rejoin(replica);
            set.awaitReplicasInSync(); // the primary counts the replica again: the replica's side alone can be up first
            broker.enqueue(message()); // confirmed again
            assertEquals(5, streamLength());
        }
    }

    /**
     * A {@code submitAll} chunk whose reply came too late is sent again whole, as no replica
     * confirmed it in time. It had run; the resend enqueues nothing again, so each message is in the
     * stream once.
     */
    @Test
    void aChunkThatRanButWhoseReplyCameLateIsSentAgainAndEnqueuedOnce() throws Exception {
        try (FaultProxy proxy = FaultProxy.to("127.0.0.1", primary.port(), Duration.ofMinutes(2));
             Broker broker = Brokers.redisProvider().create(BrokerConfig.builder().url("redis://127.0.0.1:" + proxy.port())
                     .commandTimeout(Duration.ofSeconds(2)).options(WAIT_ONE).build())) {
            broker.start(List.of(queue));
            broker.enqueue(message()); // connected, scripts loaded
            String stream = "binomic:{" + queue + "}:stream";
            long scriptRunsBefore = scriptRuns();

            // Past the chunk's reply timeout (2 s + 200 ms), so it is sent again, on the same connection, behind the late reply;
            // within the resend's bound (as long again), and within the timeout of a PING sent behind it, which would
            // replace the connection.
            proxy.holdReplyToNext(stream, Duration.ofSeconds(3));
            broker.enqueueAll(List.of(message(), message(), message()));

            assertEquals(2, scriptRuns() - scriptRunsBefore, "the chunk was sent, and sent again");
            List<?> entries = (List<?>) set.call(primary, "XRANGE", stream, "-", "+");
            assertEquals(4, entries.size(), "one entry per message: " + entries);
        }
    }

    /** The scripts the primary ran so far. */
    private long scriptRuns() {
        long runs = 0;
        for (String line : String.valueOf(set.call(primary, "INFO", "commandstats")).split("\r?\n")) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("^cmdstat_(evalsha|eval):calls=(\\d+),").matcher(line);
            if (m.find()) {
                runs += Long.parseLong(m.group(2));
            }
        }
        return runs;
    }

    /**
     * The settler takes a missing confirmation as a failure to send again, never as one to give up:
     * the batch is resent (its applied settlements are fenced no-ops, not stale) until the replica is
     * back and confirms it; no task runs twice.
     */
    @Test
    void settlementsNoReplicaConfirmsAreSentAgainUntilOneDoesAndNoTaskRunsTwice() {
        Ledger ledger = new Ledger(RedisServer.shared().host(), RedisServer.shared().port(), queue);
        Task<Job, Void> job = TestApp.job(queue, Duration.ofMillis(100));
        BinomicConfig config = BinomicConfig.builder()
                .broker(BrokerConfig.builder().url(primary.url()).options(WAIT_ONE).build())
                .schedulePeriodicTasks(false)
                .taskDefaults(TaskDefaults.builder().taskTimeout(Duration.ofSeconds(60)).build())
                .worker(WorkerConfig.builder().queues(queue).concurrency(8).leaseTimeout(Duration.ofSeconds(30))
                        .pollTimeout(Duration.ofMillis(200)).reclaimInterval(Duration.ofMillis(500)).build())
                .build();
        int count = 6;
        try (Binomic binomic = Binomic.builder().config(config).handle(job, TestApp.handler(ledger)).build().start()) {
            binomic.submitAll(job, IntStream.range(0, count).mapToObj(n -> new Job(n, 1500, 0)).toList());
            Worker worker = binomic.startWorker();
            Await.until(Duration.ofSeconds(20), () -> ledger.runs().size() == count, () -> ledger.runs().toString());
            set.kill(replica);

            Await.until(Duration.ofSeconds(20), () -> ledger.done().size() == count, () -> ledger.done().toString());
            // Past the 5 + 5 failed tries after which a batch Redis refuses would be split and given up.
            RedisServer.sleep(6000);
            assertEquals(count, worker.health().pendingSettlements(), "the outcomes are kept: " + worker.health());

            set.rejoin(replica);
            Await.until(Duration.ofSeconds(20), () -> worker.health().pendingSettlements() == 0, () -> worker.health().toString());
            assertEquals(0, worker.counters().staleSettlements(), "a resend of an applied ack is not stale");
            assertEquals(count, worker.counters().succeeded());
            assertEquals(0L, ((List<?>) set.call(replica, "XPENDING", "binomic:{" + queue + "}:stream", "binomic")).getFirst(),
                    "the acks reached the replica");
        }
        assertEquals(count, ledger.totalRuns(), "no task ran twice: " + ledger.runs());
    }
}
