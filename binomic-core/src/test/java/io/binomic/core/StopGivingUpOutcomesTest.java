package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.Task;
import io.binomic.api.TaskHandler;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.SettleReport;
import io.binomic.api.spi.Settlement;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A worker stopped while the broker is down, holding the outcomes of tasks of two queues: its error names each
 * queue with its count and error, and nothing of the worker's is logged after the line that ends its stop, not even
 * by a reclaim that was waiting on the broker when the stop began and fails when the client closes.
 */
class StopGivingUpOutcomesTest {
    private static final String DOWN = "Redis at 127.0.0.1:1 is unreachable (test outage)";

    /** Held here: java.util.logging keeps its loggers weakly. */
    private final Logger binomicLog = Logger.getLogger("io.binomic");
    private final List<LogRecord> log = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) { log.add(r); }

        @Override
        public void flush() { }

        @Override
        public void close() { }
    };
    private final Broker memory = new MemoryBrokerProvider().create(BrokerConfig.defaults());
    private Binomic binomic;

    @AfterEach
    void close() {
        binomicLog.removeHandler(capture);
        if (binomic != null) {
            binomic.close();
        }
        memory.close();
    }

    private static String text(LogRecord r) { return r.getLevel() + " " + new SimpleFormatter().formatMessage(r); }

    @Test
    void theStopNamesEachQueuesOutcomesGivenUpAndItsLastLineIsLast() throws Exception {
        AtomicBoolean down = new AtomicBoolean();
        CountDownLatch reclaimWaiting = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        ForwardingBroker outage = new ForwardingBroker(memory) {
            private void unlessDown() {
                if (down.get()) {
                    throw new BrokerException(DOWN);
                }
            }

            @Override
            public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
                unlessDown();
                return super.fetch(queues, consumer, max, wait);
            }

            @Override
            public SettleReport settle(String consumer, List<Settlement> settlements) {
                if (down.get()) {
                    throw new BrokerException(DOWN + " settling queue " + settlements.getFirst().delivery().queue());
                }
                return super.settle(consumer, settlements);
            }

            @Override
            public List<Delivery> renewLeasesReportingLost(String consumer, List<Delivery> inFlight) {
                unlessDown();
                return super.renewLeasesReportingLost(consumer, inFlight);
            }

            @Override
            public void renewLeases(String consumer, List<Delivery> inFlight) {
                unlessDown();
                super.renewLeases(consumer, inFlight);
            }

            /** As against a Redis that does not answer: the call waits until the client shuts down, then fails. */
            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                if (!down.get()) {
                    return super.reclaim(queue, consumer, minIdle, max);
                }
                reclaimWaiting.countDown();
                try {
                    closed.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new BrokerException("interrupted while waiting for Redis to answer the reclaim", e);
                }
                throw new BrokerException("Redisson is shutdown");
            }

            @Override
            public List<Delivery> pendingOf(String queue, String consumer, int max) {
                unlessDown();
                return super.pendingOf(queue, consumer, max);
            }

            @Override
            public int removeIdleConsumers(String queue, String consumer, Duration idle) {
                unlessDown();
                return super.removeIdleConsumers(queue, consumer, idle);
            }

            @Override
            public long removeSettled(String queue) {
                unlessDown();
                return super.removeSettled(queue);
            }

            @Override
            public void close() {
                closed.countDown();
            }
        };
        CountDownLatch running = new CountDownLatch(3);
        CountDownLatch finish = new CountDownLatch(1);
        Task<Integer, Void> mail = Task.builder("mail", Integer.class).queue("mail").build();
        Task<Integer, Void> audit = Task.builder("audit", Integer.class).queue("audit").build();
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().consumerName("stopping").queues("mail", "audit")
                .concurrency(4).pollTimeout(Duration.ofMillis(100)).leaseTimeout(Duration.ofSeconds(30))
                .reclaimInterval(Duration.ofMillis(100)).build()).build();
        TaskHandler<Integer, Void> hold = n -> {
            running.countDown();
            finish.await();
            return null;
        };
        binomic = Binomic.builder().config(config).codec(new TextCodec()).broker(outage).scheduler(outage.scheduler())
                .handle(mail, hold).handle(audit, hold).build().start();
        binomic.submitAll(mail, List.of(1, 2));
        binomic.submit(audit, 3);
        Worker worker = binomic.startWorker();
        assertTrue(running.await(10, TimeUnit.SECONDS), "three tasks running");
        binomicLog.addHandler(capture);
        down.set(true);
        assertTrue(reclaimWaiting.await(10, TimeUnit.SECONDS), "a reclaim waits on the broker");
        finish.countDown();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (worker.counters().held() < 3 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertEquals(3, worker.counters().held(), worker.counters().toString());

        worker.stop(Duration.ofMillis(200));
        binomic.close();
        binomic = null;
        Thread.sleep(500); // what a reclaim left running would log, once the client closed

        List<String> lines = log.stream().map(StopGivingUpOutcomesTest::text).toList();
        List<String> errors = lines.stream().filter(l -> l.contains("could not be written before stopping")).toList();
        assertEquals(1, errors.size(), String.join("\n", lines));
        assertTrue(errors.getFirst().contains("3 outcome(s) could not be written before stopping ("), errors.getFirst());
        assertTrue(errors.getFirst().contains("2 of queue mail: " + DOWN + " settling queue "), errors.getFirst());
        assertTrue(errors.getFirst().contains("1 of queue audit: " + DOWN + " settling queue "), errors.getFirst());
        int last = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains("worker stopping stopped in ")) {
                last = i;
            }
        }
        assertTrue(last >= 0, String.join("\n", lines));
        List<LogRecord> after = log.subList(last + 1, log.size()).stream()
                .filter(r -> r.getLevel().intValue() >= Level.WARNING.intValue()).toList();
        assertEquals(List.of(), after.stream().map(StopGivingUpOutcomesTest::text).toList(), String.join("\n", lines));
    }
}
