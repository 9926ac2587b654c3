package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A worker whose lease renewals cannot reach Redis for longer than the lease (its connections
 * stall, as across a Redis restart seen from one side) while another worker reaches Redis: the
 * other worker reclaims and runs the long task. Once the stalled worker's renewal reaches Redis
 * again, it says the delivery was taken over, and the stalled worker stops its run there: the two
 * runs overlap no longer than the stall plus a renewal period, and only the new owner settles.
 */
class LeaseLostIT {
    private static final Duration LEASE = Duration.ofSeconds(2);
    private final RedisServer redis = RedisServer.shared();

    @Test
    void aWorkerWhoseRenewalsStalledPastTheLeaseStopsTheRunAnotherWorkerTookOver() throws Exception {
        String queue = "lease-lost-" + UUID.randomUUID().toString().substring(0, 8);
        CountDownLatch firstRunStarted = new CountDownLatch(1);
        AtomicBoolean firstRunInterrupted = new AtomicBoolean();
        AtomicInteger runs = new AtomicInteger();
        Task<Integer, Void> longTask = Task.builder("long", Integer.class).queue(queue).build();
        TaskBinding<Integer, Void> binding = longTask.handledBy((Integer n) -> {
            if (runs.incrementAndGet() == 1) {
                firstRunStarted.countDown();
                try {
                    Thread.sleep(TimeUnit.SECONDS.toMillis(55)); // far longer than the lease, shorter than the task timeout
                } catch (InterruptedException e) {
                    firstRunInterrupted.set(true);
                    throw e;
                }
            }
            return null;
        });
        try (FaultProxy proxy = FaultProxy.to(redis.host(), redis.port(), Duration.ofMinutes(5));
             Binomic stalledSide = Binomic.builder().config(TestApp.config("redis://127.0.0.1:" + proxy.port(), queue, LEASE))
                     .handle(binding).build().start();
             Binomic direct = Binomic.builder().config(TestApp.config(redis.url(), queue, LEASE)).handle(binding).build().start()) {
            Worker stalled = stalledSide.startWorker();
            direct.submit(longTask, 1);
            assertTrue(firstRunStarted.await(20, TimeUnit.SECONDS), "the first run started on the worker behind the proxy");

            proxy.stall(true);
            Worker other = direct.startWorker();
            Await.until(Duration.ofSeconds(20), () -> other.counters().succeeded() == 1,
                    () -> "the other worker did not take the task over; " + direct.queueStats(queue));
            proxy.stall(false);

            Await.until(Duration.ofSeconds(30), firstRunInterrupted::get,
                    () -> "the first run goes on after another worker took its delivery over and ran it");
            Await.until(Duration.ofSeconds(10), () -> direct.queueStats(queue).pending() == 0, () -> direct.queueStats(queue).toString());
            assertEquals(0, stalled.counters().staleSettlements(), "the stopped run sent no outcome");
            assertEquals(0, stalled.counters().failed(), "the stopped run is not a failed attempt");
            assertEquals(0, direct.queueStats(queue).delayed(), "no retry scheduled");
            assertEquals(2, runs.get());
        }
    }
}
