package io.binomic.core.internal.worker;

import io.binomic.api.TaskDefaults;
import io.binomic.api.TaskRegistry;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.PayloadCodec;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import io.binomic.core.internal.StatsRecorder;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * A worker in this JVM. Four loops on virtual threads: the fetcher reads as many messages as there
 * are free slots and starts one virtual thread per message; the acker sends acks in batches; the
 * keeper renews the leases of running messages and reclaims stranded ones; the mover puts due
 * delayed messages (DELAY submissions, retry backoffs) on their queues.
 */
public final class WorkerRuntime implements Worker {
    private static final System.Logger LOG = System.getLogger(WorkerRuntime.class.getName());
    private static final int ACK_BATCH = 1000;
    /**
     * Most messages asked for in one fetch (or reclaim), however many slots are free. A reply of
     * 100k entries (~15 MB) takes longer to decode than a command timeout: the client then
     * retries the read, and the first read's entries sit pending until reclaim.
     */
    private static final int FETCH_BATCH = 1000;
    private static final int MOVE_BATCH = 1000;
    private static final Duration MOVER_MAX_SLEEP = Duration.ofMillis(250);
    private static final Duration BROKER_ERROR_PAUSE = Duration.ofMillis(500);

    private final WorkerConfig config;
    private final List<String> queues;
    private final Broker broker;
    private final Clock clock;
    private final String consumerName;
    private final Semaphore slots;
    private final DeliveryProcessor processor;
    private final Map<String, Running> inFlight = new ConcurrentHashMap<>();
    private final LinkedBlockingQueue<Delivery> acks = new LinkedBlockingQueue<>();
    private final List<Thread> loops = new ArrayList<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean running;
    private volatile boolean acceptingAcks = true;

    private record Running(Delivery delivery, Thread thread) { }

    public WorkerRuntime(WorkerConfig config, List<String> queues, TaskDefaults defaults, TaskRegistry registry,
                         Broker broker, PayloadCodec codec, Clock clock, StatsRecorder stats) {
        this(config, queues, defaults, registry, broker, codec, clock, stats, TaskInvokers.best());
    }

    WorkerRuntime(WorkerConfig config, List<String> queues, TaskDefaults defaults, TaskRegistry registry,
                  Broker broker, PayloadCodec codec, Clock clock, StatsRecorder stats, TaskInvoker invoker) {
        this.config = config;
        this.queues = List.copyOf(queues);
        this.broker = broker;
        this.clock = clock;
        this.consumerName = config.consumerName().orElseGet(WorkerRuntime::defaultConsumerName);
        this.slots = new Semaphore(config.concurrency());
        this.processor = new DeliveryProcessor(registry, defaults, codec, invoker, broker, acks::add, clock, stats,
                ThreadLocalRandom.current());
        LOG.log(Level.DEBUG, "worker {0} uses the {1} task invoker", consumerName, invoker.name());
    }

    private static String defaultConsumerName() {
        String host;
        try {
            host = InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "host";
        }
        byte[] random = new byte[3];
        ThreadLocalRandom.current().nextBytes(random);
        return host.replaceAll("[^A-Za-z0-9_.-]", "_") + "-" + ProcessHandle.current().pid() + "-" + HexFormat.of().formatHex(random);
    }

    /** Starts the loops. */
    public synchronized void start() {
        if (running || stopped.getCount() == 0) {
            throw new IllegalStateException("a worker starts once");
        }
        running = true;
        loops.add(Thread.ofVirtual().name("binomic-fetch-" + consumerName).start(this::fetchLoop));
        loops.add(Thread.ofVirtual().name("binomic-ack-" + consumerName).start(this::ackLoop));
        loops.add(Thread.ofVirtual().name("binomic-lease-" + consumerName).start(this::leaseLoop));
        loops.add(Thread.ofVirtual().name("binomic-move-" + consumerName).start(this::moveLoop));
        LOG.log(Level.INFO, "worker {0} started on queues {1} with concurrency {2}", consumerName, queues, config.concurrency());
    }

    private void fetchLoop() {
        long nextReclaim = System.nanoTime() + config.reclaimInterval().toNanos();
        while (running) {
            int free = 0;
            try {
                if (!slots.tryAcquire(config.pollTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
                    continue;
                }
                free = 1 + slots.drainPermits();
                if (!running) {
                    break;
                }
                // Reclaim from the fetcher, which owns the free slots: stranded messages are
                // taken before new ones, and never beyond this worker's capacity.
                if (System.nanoTime() - nextReclaim >= 0) {
                    nextReclaim = System.nanoTime() + config.reclaimInterval().toNanos();
                    free -= reclaimStranded(Math.min(free, FETCH_BATCH));
                    if (free == 0) {
                        continue;
                    }
                }
                List<Delivery> deliveries = broker.fetch(queues, consumerName, Math.min(free, FETCH_BATCH), config.pollTimeout());
                for (Delivery d : deliveries) {
                    dispatch(d);
                }
                free -= deliveries.size();
            } catch (InterruptedException e) {
                break;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: fetching failed ({1}); retrying in {2} ms", consumerName, e.getMessage(),
                        String.valueOf(BROKER_ERROR_PAUSE.toMillis()));
                pause(BROKER_ERROR_PAUSE);
            } finally {
                slots.release(free);
            }
        }
    }

    /** Takes over up to {@code free} stranded deliveries and runs them; returns how many. */
    private int reclaimStranded(int free) {
        int taken = 0;
        for (String queue : queues) {
            if (taken == free) {
                break;
            }
            try {
                for (Delivery d : broker.reclaim(queue, consumerName, config.leaseTimeout(), free - taken)) {
                    LOG.log(Level.WARNING, "worker {0} reclaimed stranded entry {1} of queue {2} as attempt {3}",
                            consumerName, d.receipt(), queue, d.attempt());
                    dispatch(d);
                    taken++;
                }
                broker.removeIdleConsumers(queue, config.leaseTimeout().multipliedBy(10));
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: reclaim on queue {1} failed: {2}", consumerName, queue, e.getMessage());
            }
        }
        return taken;
    }

    /** Runs {@code d} on its own virtual thread; the slot it holds is released when it ends. */
    private void dispatch(Delivery d) {
        Thread thread = Thread.ofVirtual().name("binomic-run-" + d.receipt()).unstarted(() -> {
            try {
                processor.process(d);
            } catch (RuntimeException | Error e) {
                // The processor records every task fault itself; reaching here is a bug, and the
                // delivery stays pending so reclaim still brings it back.
                LOG.log(Level.ERROR, "worker " + consumerName + ": unexpected failure processing " + d.receipt(), e);
            } finally {
                inFlight.remove(d.receipt());
                slots.release();
            }
        });
        inFlight.put(d.receipt(), new Running(d, thread));
        thread.start();
    }

    private void ackLoop() {
        List<Delivery> batch = new ArrayList<>(ACK_BATCH);
        while (true) {
            try {
                Delivery first = acks.poll(config.pollTimeout().toMillis(), TimeUnit.MILLISECONDS);
                if (first == null) {
                    if (!acceptingAcks && acks.isEmpty()) {
                        return;
                    }
                    continue;
                }
                batch.add(first);
                acks.drainTo(batch, ACK_BATCH - 1);
                sendAcks(batch);
                batch.clear();
            } catch (InterruptedException e) {
                sendAcks(drainAll());
                return;
            }
        }
    }

    private List<Delivery> drainAll() {
        List<Delivery> rest = new ArrayList<>();
        acks.drainTo(rest);
        return rest;
    }

    private void sendAcks(List<Delivery> batch) {
        for (int attempt = 1; !batch.isEmpty(); attempt++) {
            try {
                broker.ack(batch);
                return;
            } catch (RuntimeException e) {
                if (attempt >= 5) {
                    // Unacked entries are reclaimed and run again: a duplicate, never a loss.
                    LOG.log(Level.ERROR, "worker {0}: could not ack {1} deliveries ({2}); they will be redelivered",
                            consumerName, batch.size(), e.getMessage());
                    return;
                }
                pause(BROKER_ERROR_PAUSE.multipliedBy(attempt));
            }
        }
    }

    private void leaseLoop() {
        Duration renewEvery = config.leaseTimeout().dividedBy(3);
        while (running) {
            if (!pause(renewEvery)) {
                return;
            }
            List<Delivery> held = inFlight.values().stream().map(Running::delivery).toList();
            if (held.isEmpty()) {
                continue;
            }
            try {
                broker.renewLeases(consumerName, held);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: lease renewal failed: {1}", consumerName, e.getMessage());
            }
        }
    }

    private void moveLoop() {
        while (running) {
            Instant now = clock.instant();
            Duration sleep = MOVER_MAX_SLEEP;
            try {
                for (String queue : queues) {
                    while (broker.moveDue(queue, now, MOVE_BATCH) == MOVE_BATCH) {
                        // A full batch means more may be due: keep moving before sleeping.
                    }
                    Optional<Instant> next = broker.nextDue(queue);
                    if (next.isPresent()) {
                        Duration until = Duration.between(clock.instant(), next.get());
                        if (until.compareTo(sleep) < 0) {
                            sleep = until.isNegative() ? Duration.ZERO : until;
                        }
                    }
                }
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "worker {0}: moving due messages failed: {1}", consumerName, e.getMessage());
                sleep = BROKER_ERROR_PAUSE;
            }
            if (!pause(sleep)) {
                return;
            }
        }
    }

    /** Sleeps; false when interrupted (the worker is stopping). */
    private static boolean pause(Duration d) {
        try {
            Thread.sleep(d);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public String consumerName() {
        return consumerName;
    }

    @Override
    public WorkerCounters counters() {
        return new WorkerCounters(inFlight.size(), processor.succeeded.sum(), processor.failed.sum(),
                processor.retried.sum(), processor.deadLettered.sum(), 0);
    }

    @Override
    public io.binomic.core.WorkerHealth health() {
        return new io.binomic.core.WorkerHealth(true, Duration.ZERO, Duration.ZERO, 0, Optional.empty());
    }

    @Override
    public void stop(Duration grace) {
        synchronized (this) {
            if (loops.isEmpty()) {
                stopped.countDown();
            }
            if (!running) {
                awaitStopped();
                return;
            }
            running = false;
        }
        LOG.log(Level.INFO, "worker {0} stopping: {1} task(s) running, grace {2}", consumerName, inFlight.size(), grace);
        Thread fetcher = loops.getFirst();
        join(fetcher, config.pollTimeout().plusSeconds(5));
        long deadline = System.nanoTime() + grace.toNanos();
        while (!inFlight.isEmpty() && System.nanoTime() < deadline) {
            pause(Duration.ofMillis(10));
        }
        if (!inFlight.isEmpty()) {
            LOG.log(Level.WARNING, "worker {0}: cancelling {1} task(s) still running after the grace; they stay pending for reclaim",
                    consumerName, inFlight.size());
            inFlight.values().forEach(r -> r.thread().interrupt());
            long cancelDeadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (!inFlight.isEmpty() && System.nanoTime() < cancelDeadline) {
                pause(Duration.ofMillis(10));
            }
        }
        acceptingAcks = false;
        for (Thread loop : loops.subList(1, loops.size())) {
            if (!loop.getName().startsWith("binomic-ack-")) {
                loop.interrupt();
            }
            join(loop, Duration.ofSeconds(10));
        }
        WorkerCounters c = counters();
        LOG.log(Level.INFO, "worker {0} stopped: {1} succeeded, {2} failed, {3} retried, {4} dead-lettered",
                consumerName, c.succeeded(), c.failed(), c.retried(), c.deadLettered());
        stopped.countDown();
    }

    private void awaitStopped() {
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void join(Thread t, Duration max) {
        try {
            t.join(max);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public boolean isStopped() {
        return stopped.getCount() == 0;
    }

    @Override
    public void close() {
        stop(config.shutdownGrace());
    }

    @Override
    public String toString() {
        return "Worker[" + consumerName + ", queues=" + queues + "]";
    }
}
