package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.WorkerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.JobUpdate;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A worker whose lease lapsed while it still held a delivery (a round that stalled between the read
 * and the run, renewals that could not reach the broker for longer than the lease) must not go on
 * running what another worker has reclaimed meanwhile: the two would run the same job at once.
 */
class LeaseRacesTest {
    private static final Duration LEASE = Duration.ofMillis(300);

    private final Broker shared = new MemoryBrokerProvider().create(BrokerConfig.defaults());
    private final List<Binomic> opened = new ArrayList<>();

    @AfterEach
    void close() {
        opened.forEach(Binomic::close);
        shared.close();
    }

    @Test
    void aDeliveryWhoseLeaseLapsedBetweenTheReadAndTheRunIsNotRunWhenAnotherWorkerTookItOver() throws Exception {
        Stall stall = new Stall();
        SharedBroker stallsAfterItsFirstRead = new SharedBroker(shared) {
            @Override
            public List<Delivery> fetch(List<String> queues, String consumer, int max, Duration wait) throws InterruptedException {
                List<Delivery> got = super.fetch(queues, consumer, max, wait);
                stall.holdUpFirst(!got.isEmpty()); // between the read and the dispatch (a slow round, a GC)
                return got;
            }

            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                return List.of(); // only the other worker takes it over
            }
        };
        Race race = new Race();
        Recording recording = new Recording();
        recording.enable("io.binomic.LeaseLost");
        recording.start();
        Binomic slow = start(race.bindings(), worker("slow").concurrency(1), stallsAfterItsFirstRead);
        Worker slowWorker = slow.startWorker();
        slow.submit(race.job, 1);
        stall.awaitHeldUp("the slow worker read the job");

        takeOverWhileHeldUp(stall, race.bindings(), "the other worker reclaimed and ran it");
        race.assertRanOnceAfterTheMarker(slow, slowWorker);
        assertEquals(0, slowWorker.counters().staleSettlements(), "the slow worker settled nothing it had lost");
        recording.stop();
        Path file = Files.createTempFile("binomic", ".jfr");
        recording.dump(file);
        recording.close();
        List<String> lost = RecordingFile.readAllEvents(file).stream().filter(e -> e.getEventType().getName().equals("io.binomic.LeaseLost"))
                .map(e -> e.getString("worker") + " " + e.getString("action")).toList();
        Files.delete(file);
        assertEquals(List.of("slow dropped before running"), lost, "the lost lease is in the flight recording");
    }

    @Test
    void aDeliveryHeldUpPastTheLeaseAfterItsRoundWasCheckedIsNotRunWhenAnotherWorkerTookItOver() throws Exception {
        // The round's own check passes (the read is fresh); then a broker call on the way to the
        // handlers (here the start mark of the fetch's tracked jobs; in a chaos run a read of the
        // paused queues) is caught by an outage longer than the lease: the call lands as Redis comes
        // back, after another worker has reclaimed and run both jobs. Not yet held, they were never renewed.
        Stall stall = new Stall();
        SharedBroker stallsItsFirstStartMarks = new SharedBroker(shared) {
            @Override
            public Set<UUID> startJobs(List<JobUpdate> starts) {
                Set<UUID> notStarted = super.startJobs(starts);
                stall.holdUpFirst(starts.size() > 1); // written, its reply held up
                return notStarted;
            }

            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                return List.of(); // only the other worker takes them over
            }
        };
        Task<Integer, Void> tracked = Task.builder("tracked", Integer.class).keepStatusFor(Duration.ofMinutes(5)).build();
        Task<Integer, Void> marker = Task.builder("marker", Integer.class).build();
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger markers = new AtomicInteger();
        List<TaskBinding<?, ?>> bindings = List.of(tracked.handledBy((Integer n) -> {
            runs.incrementAndGet();
            return null;
        }), marker.handledBy((Integer n) -> {
            markers.incrementAndGet();
            return null;
        }));
        Binomic slow = start(bindings, worker("slow").concurrency(2), stallsItsFirstStartMarks);
        slow.submit(tracked, 1);
        slow.submit(tracked, 2); // both in the slow worker's first read
        Worker slowWorker = slow.startWorker();
        stall.awaitHeldUp("the slow worker read both jobs and is marking them started");

        Worker otherWorker = start(bindings, worker("other"), new SharedBroker(shared)).startWorker();
        WorkerTest.await("the other worker reclaimed and ran both", () -> otherWorker.counters().succeeded() == 2);
        otherWorker.stop(Duration.ofSeconds(5));
        stall.released.countDown();

        slow.submit(marker, 3); // read by the slow worker's next round, after the held-up one dispatched both
        WorkerTest.await("the slow worker ran the marker", () -> markers.get() == 1);
        slowWorker.stop(Duration.ofSeconds(5)); // waits for the runs it dispatched
        assertEquals(2, runs.get(), "runs of the two jobs: the slow worker ran them too, after the other had taken them over");
        assertEquals(0, slowWorker.counters().staleSettlements(), "the slow worker settled nothing it had lost");
        assertEquals(0, shared.stats("default").pending(), shared.stats("default").toString());
    }

    @Test
    void aReclaimHeldUpPastTheLeaseDoesNotRunWhatAnotherWorkerReclaimedFromIt() throws Exception {
        Stall stall = new Stall();
        SharedBroker stallsAfterItsFirstReclaim = new SharedBroker(shared) {
            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                List<Delivery> got = super.reclaim(queue, consumer, minIdle, max);
                stall.holdUpFirst(!got.isEmpty()); // between the reclaim and the run
                return got;
            }
        };
        Race race = new Race();
        Binomic slow = start(race.bindings(), worker("slow").concurrency(1), stallsAfterItsFirstReclaim);
        slow.submit(race.job, 1);
        // Read by a worker that then died: pending under its name until its lease lapses.
        assertEquals(1, shared.fetch(List.of("default"), "dead-worker", 1, Duration.ZERO).size());
        Thread.sleep(LEASE.multipliedBy(2).toMillis());
        Worker slowWorker = slow.startWorker();
        stall.awaitHeldUp("the slow worker reclaimed the stranded job");

        takeOverWhileHeldUp(stall, race.bindings(), "the other worker reclaimed it from the slow one and ran it");
        stall.heldUp.get().join(TimeUnit.SECONDS.toMillis(20)); // the reclaim's thread ends once it ran, held or dropped what it took
        // held deliveries run before a fetch: the marker runs after what the reclaim took
        race.assertRanOnceAfterTheMarker(slow, slowWorker);
    }

    @Test
    void aHandlerWhoseLeaseLapsedWhileRenewalsFailedIsStoppedOnceARenewalSaysAnotherWorkerTookItOver() throws Exception {
        AtomicBoolean renewalsFail = new AtomicBoolean();
        SharedBroker renewalsMayFail = new SharedBroker(shared) {
            @Override
            public List<Delivery> renewLeasesReportingLost(String consumer, List<Delivery> inFlight) {
                failIfAsked();
                return super.renewLeasesReportingLost(consumer, inFlight);
            }

            private void failIfAsked() {
                if (renewalsFail.get()) {
                    throw new BrokerException("renewal failed: Redis is restarting");
                }
            }

            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                return List.of(); // only the other worker takes it over
            }
        };
        CountDownLatch firstRunStarted = new CountDownLatch(1);
        AtomicBoolean firstRunInterrupted = new AtomicBoolean();
        AtomicInteger runs = new AtomicInteger();
        Task<Integer, Void> longJob = Task.builder("long", Integer.class).maxAttempts(3).build();
        List<TaskBinding<?, ?>> bindings = List.of(longJob.handledBy((Integer n) -> {
            if (runs.incrementAndGet() == 1) {
                firstRunStarted.countDown();
                try {
                    Thread.sleep(TimeUnit.SECONDS.toMillis(30)); // a long task, far longer than the lease
                } catch (InterruptedException e) {
                    firstRunInterrupted.set(true);
                    throw e;
                }
            }
            return null;
        }));
        Binomic slow = start(bindings, worker("slow"), renewalsMayFail);
        Worker slowWorker = slow.startWorker();
        slow.submit(longJob, 1);
        assertTrue(firstRunStarted.await(20, TimeUnit.SECONDS), "the first run started");
        renewalsFail.set(true);

        otherRunsIt(bindings, "the other worker reclaimed and ran it");
        renewalsFail.set(false);

        WorkerTest.await("the first run, whose lease was lost, was interrupted", firstRunInterrupted::get);
        slowWorker.stop(Duration.ofSeconds(5));
        QueueStats stats = shared.stats("default");
        assertEquals(0, slowWorker.counters().staleSettlements(), "the interrupted run's outcome is dropped, not sent");
        assertEquals(0, stats.delayed(), "no retry scheduled: " + stats);
        assertEquals(0, stats.deadLetters(), stats.toString());
        assertEquals(0, stats.pending(), stats.toString());
        assertEquals(2, runs.get());
    }

    @Test
    void aRenewalStuckOnAStalledConnectionDoesNotKeepTheNextFromLandingWithinTheLease() throws Exception {
        Duration lease = Duration.ofSeconds(4);
        Duration stall = Duration.ofMillis(2500); // shorter than the lease minus a renewal period (1 s)
        AtomicBoolean stalled = new AtomicBoolean();
        AtomicBoolean oneCaught = new AtomicBoolean();
        AtomicInteger landed = new AtomicInteger();
        CountDownLatch healed = new CountDownLatch(1);
        CountDownLatch testEnds = new CountDownLatch(1);
        SharedBroker renewalsStall = new SharedBroker(shared) {
            @Override
            public List<Delivery> renewLeasesReportingLost(String consumer, List<Delivery> inFlight) {
                if (stalled.get()) {
                    // The first call the stall caught timed out in the client and went into its
                    // retries, which land long after the stall; a call sent later is on the wire
                    // and lands as the stall ends.
                    await(oneCaught.compareAndSet(false, true) ? testEnds : healed);
                }
                List<Delivery> lost = super.renewLeasesReportingLost(consumer, inFlight);
                landed.incrementAndGet();
                return lost;
            }

            private static void await(CountDownLatch latch) {
                try {
                    latch.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }

            @Override
            public List<Delivery> reclaim(String queue, String consumer, Duration minIdle, int max) {
                return List.of(); // only the other worker takes over
            }
        };
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger runs = new AtomicInteger();
        Task<Integer, Void> longJob = Task.builder("long", Integer.class).build();
        List<TaskBinding<?, ?>> bindings = List.of(longJob.handledBy((Integer n) -> {
            runs.incrementAndGet();
            started.countDown();
            release.await(60, TimeUnit.SECONDS);
            return null;
        }));
        try {
            Binomic slow = start(bindings, worker("slow", lease), renewalsStall);
            Worker slowWorker = slow.startWorker();
            slow.submit(longJob, 1);
            assertTrue(started.await(20, TimeUnit.SECONDS), "the run started");
            Worker otherWorker = start(bindings, worker("other", lease), new SharedBroker(shared)).startWorker();

            int before = landed.get();
            WorkerTest.await("a renewal landed", () -> landed.get() > before);
            stalled.set(true);
            Thread.sleep(stall);
            stalled.set(false);
            healed.countDown();
            Thread.sleep(lease.plusSeconds(1)); // past when the other worker would reclaim had no renewal landed since the stall began

            assertEquals(1, runs.get(), "runs: the other worker reclaimed and ran the job the stalled worker still ran");
            release.countDown();
            WorkerTest.await("the stalled worker completed the job", () -> slowWorker.counters().succeeded() == 1);
            assertEquals(0, otherWorker.counters().succeeded() + otherWorker.counters().failed(), "the other worker ran nothing");
        } finally {
            release.countDown();
            testEnds.countDown();
        }
    }

    /**
     * Holds up the slow worker's broker call, past the lease: the first call that got something waits
     * until released, so that another worker can take over what it returns.
     */
    private static final class Stall {
        final CountDownLatch reached = new CountDownLatch(1);
        final CountDownLatch released = new CountDownLatch(1);
        final AtomicReference<Thread> heldUp = new AtomicReference<>();

        void holdUpFirst(boolean gotSomething) {
            if (!gotSomething || !heldUp.compareAndSet(null, Thread.currentThread())) {
                return;
            }
            reached.countDown();
            try {
                released.await(20, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        void awaitHeldUp(String what) throws InterruptedException {
            assertTrue(reached.await(20, TimeUnit.SECONDS), what);
        }
    }

    /**
     * The job both workers race for, and a marker submitted once the slow worker goes on: with its one
     * slot, the slow worker runs the marker only after what its held-up call handed it.
     */
    private final class Race {
        final Task<Integer, Void> job = Task.builder("job", Integer.class).build();
        final Task<Integer, Void> marker = Task.builder("marker", Integer.class).build();
        final AtomicInteger runs = new AtomicInteger();
        final AtomicInteger markers = new AtomicInteger();

        List<TaskBinding<?, ?>> bindings() {
            return List.of(job.handledBy((Integer n) -> {
                runs.incrementAndGet();
                return null;
            }), marker.handledBy((Integer n) -> {
                markers.incrementAndGet();
                return null;
            }));
        }

        void assertRanOnceAfterTheMarker(Binomic slow, Worker slowWorker) throws Exception {
            slow.submit(marker, 2);
            WorkerTest.await("the slow worker ran the marker", () -> markers.get() == 1);
            slowWorker.stop(Duration.ofSeconds(5));
            assertEquals(1, runs.get(), "runs of the job: the slow worker ran it too, after another worker had taken it over");
            assertEquals(0, shared.stats("default").pending(), shared.stats("default").toString());
        }
    }

    /** Another worker reclaims the job while the slow worker is held up, runs it and stops; then the slow one goes on. */
    private void takeOverWhileHeldUp(Stall stall, List<TaskBinding<?, ?>> bindings, String what) throws Exception {
        otherRunsIt(bindings, what).stop(Duration.ofSeconds(5));
        stall.released.countDown();
    }

    /** A second worker on the shared broker, once it ran one job. */
    private Worker otherRunsIt(List<TaskBinding<?, ?>> bindings, String what) throws Exception {
        Worker otherWorker = start(bindings, worker("other"), new SharedBroker(shared)).startWorker();
        WorkerTest.await(what, () -> otherWorker.counters().succeeded() == 1);
        return otherWorker;
    }

    private static WorkerConfig.Builder worker(String name) {
        return worker(name, LEASE);
    }

    private static WorkerConfig.Builder worker(String name, Duration lease) {
        return WorkerConfig.builder().consumerName(name).pollTimeout(Duration.ofMillis(100)).leaseTimeout(lease)
                .reclaimInterval(Duration.ofMillis(100)).shutdownGrace(Duration.ofSeconds(2));
    }

    private Binomic start(List<TaskBinding<?, ?>> bindings, WorkerConfig.Builder worker, SharedBroker broker) {
        BinomicConfig config = BinomicConfig.builder().worker(worker.build()).build();
        Binomic.Builder builder = Binomic.builder().config(config).codec(new TextCodec()).broker(broker).scheduler(broker.scheduler());
        bindings.forEach(builder::handle);
        Binomic binomic = builder.build().start();
        opened.add(binomic);
        return binomic;
    }

    /** A view of the shared broker for one worker: closing it leaves the broker open for the other. */
    private static class SharedBroker extends ForwardingBroker {
        SharedBroker(Broker shared) {
            super(shared);
        }

        @Override
        public void close() {
        }
    }
}
