package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.spi.Batches;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobRecords;
import io.binomic.api.spi.JobUpdate;
import io.binomic.api.spi.Message;
import io.binomic.api.spi.Scheduler;
import io.binomic.api.spi.Settlement;
import io.binomic.core.BatchesContractTest;
import io.binomic.core.BrokerCapabilities;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The batches contract, run against a real Redis; and what counting a child costs the settle script there. */
class RedisBatchesContractTest extends BatchesContractTest {
    private static final int CHILDREN = 50;

    @Override
    protected Broker createBroker() {
        return Brokers.redis(RedisServer.shared());
    }

    @Override
    protected Scheduler createScheduler(Broker started) {
        return Brokers.scheduler(started);
    }

    /**
     * A child's settlement that does not complete its batch counts it from the counters' own replies
     * and reads no clock (Redis' TIME): the clock is read when a callback fires. Each of {@value #CHILDREN}
     * children is settled on its own; the callbacks are enqueued once, by the last.
     */
    @Test
    void aChildThatDoesNotCompleteItsBatchIsCountedWithoutReadingTheClock() throws Exception {
        UUID batch = UUID.randomUUID();
        submit(false, jobs(batch, queue, CHILDREN), batch);
        List<Delivery> children = new ArrayList<>();
        while (children.size() < CHILDREN) {
            children.addAll(broker.fetch(List.of(queue), "c1", CHILDREN, Duration.ofMillis(500)));
        }
        long time0 = calls("time");
        for (Delivery d : children.subList(0, CHILDREN - 1)) {
            assertTrue(broker.settle("c1", List.of(succeeded(d))).allApplied());
        }
        long clockReads = calls("time") - time0;
        assertTrue(clockReads < CHILDREN / 2, (CHILDREN - 1) + " settlements that completed nothing read the clock " + clockReads
                + " times");
        assertEquals(Map.of(), callbacksEnqueued(), "no callback before the last child");
        assertTrue(broker.settle("c1", List.of(succeeded(children.getLast()))).allApplied());
        assertEquals(Map.of("on-COMPLETE", 1, "on-SUCCESS", 1), callbacksEnqueued());
    }

    /**
     * A new batch's submit lists its children without asking the jobs' hash about each (an HGET per
     * child), and a child named twice in it is still enqueued and counted once.
     */
    @Test
    void aNewBatchIsListedWithoutAReadPerChildAndAChildNamedTwiceCountsOnce() throws Exception {
        UUID batch = UUID.randomUUID();
        List<Message> jobs = new ArrayList<>(jobs(batch, queue, CHILDREN));
        jobs.add(jobs.getFirst());
        long hget0 = calls("hget");
        submit(false, jobs, batch);
        long reads = calls("hget") - hget0;
        assertTrue(reads < CHILDREN / 2, "the submit of " + CHILDREN + " children made " + reads + " HGET calls");

        assertEquals(CHILDREN, BrokerCapabilities.of(broker, Batches.class).readBatch(batch).orElseThrow().total());
        List<Delivery> children = new ArrayList<>();
        List<Delivery> got;
        while (!(got = broker.fetch(List.of(queue), "c1", 2 * CHILDREN, Duration.ofMillis(300))).isEmpty()) {
            children.addAll(got);
        }
        assertEquals(CHILDREN, children.size(), "each child enqueued once");
    }

    private static Settlement succeeded(Delivery d) {
        return new Settlement.Ack(d, new JobUpdate(d.queue(), d.message().orElseThrow().id(), Map.of(JobRecords.STATE, "SUCCEEDED"),
                List.of(), Duration.ZERO, true));
    }

    private static long calls(String command) {
        String stats = String.valueOf(RedisServer.shared().call("INFO", "commandstats"));
        String key = "cmdstat_" + command + ":calls=";
        int from = stats.indexOf(key);
        return from < 0 ? 0 : Long.parseLong(stats.substring(from + key.length(), stats.indexOf(',', from)));
    }
}
