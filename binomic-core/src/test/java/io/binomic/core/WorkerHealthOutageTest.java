package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A worker's health during an outage where each fetch waits, then fails, as against a Redis that does not answer
 * (a command timeout, then the client's error): it says BROKER_UNREACHABLE as soon as the first fetch overruns, and
 * the age it gives is the outage's, from the first call that failed, not that of the fetch under way.
 */
class WorkerHealthOutageTest {
    private static final Duration POLL = Duration.ofMillis(100);
    private static final long FETCH_WAITS_MILLIS = 1500;

    private final Broker memory = new MemoryBrokerProvider().create(BrokerConfig.defaults());
    private Binomic binomic;

    @AfterEach
    void close() {
        if (binomic != null) {
            binomic.close();
        }
        memory.close();
    }

    @Test
    void unreachableShowsAtTheFirstOverrunAndCountsTheOutagesAge() throws Exception {
        AtomicBoolean down = new AtomicBoolean();
        ForwardingBroker outage = new ForwardingBroker(memory) {
            @Override
            public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
                if (down.get()) {
                    Thread.sleep(FETCH_WAITS_MILLIS);
                    throw new BrokerException("Redis at 127.0.0.1:1 did not answer the fetch within 1500 ms (test outage)");
                }
                return super.fetch(queues, consumer, max, wait);
            }

            @Override
            public void close() { }
        };
        Task<Integer, Void> job = Task.builder("job", Integer.class).build();
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().consumerName("health").pollTimeout(POLL)
                .build()).build();
        binomic = Binomic.builder().config(config).codec(new TextCodec()).broker(outage).scheduler(outage.scheduler())
                .handle(job, (Integer n) -> null).build().start();
        Worker worker = binomic.startWorker();
        assertEquals(WorkerHealth.State.CONSUMING, worker.health().state());

        long downAt = System.nanoTime();
        down.set(true);
        WorkerHealth first = worker.health();
        while (first.state() != WorkerHealth.State.BROKER_UNREACHABLE && since(downAt) < 10_000) {
            Thread.sleep(20);
            first = worker.health();
        }
        long shownAfter = since(downAt);
        // Seen while the fetch overran (usually; its failure follows 0.4 s later): an overrun also names a starved JVM.
        String firstProblem = first.problem().orElse("");
        assertTrue(!firstProblem.startsWith("a fetch has not returned") || firstProblem.endsWith("or this JVM short of CPU)"),
                firstProblem);
        // The fetch under way when the outage began returns within the poll timeout; the next one overruns at the poll
        // timeout plus a second; 2.5 s of slack for a loaded machine, still short of the 5 s + poll timeout it took before.
        assertTrue(shownAfter < POLL.toMillis() * 2 + 1000 + 2500, "BROKER_UNREACHABLE after " + shownAfter + " ms");

        // Past the first fetch's failure and into the second's wait: the age counts from the first call that failed.
        Thread.sleep(Math.max(0, FETCH_WAITS_MILLIS * 2 + 700 - since(downAt)));
        WorkerHealth during = worker.health();
        long outageMillis = since(downAt);
        assertEquals(WorkerHealth.State.BROKER_UNREACHABLE, during.state(), during.toString());
        Matcher age = Pattern.compile(" for (\\d+) s").matcher(during.problem().orElseThrow());
        assertTrue(age.find(), during.toString());
        long shownSeconds = Long.parseLong(age.group(1));
        assertTrue(shownSeconds >= TimeUnit.MILLISECONDS.toSeconds(outageMillis - POLL.toMillis() * 2) - 1
                        && shownSeconds >= 2, "the outage is " + outageMillis + " ms old; the health says " + during.problem().orElseThrow());
        assertTrue(during.problem().orElseThrow().startsWith("fetching has failed for "), during.toString());
    }

    private static long since(long nanos) { return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos); }
}
