package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.QueueStats;
import io.binomic.core.Binomic;
import io.binomic.core.internal.process.Master;
import io.binomic.core.internal.process.MasterEvent;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master's workers against Redis, one of them killed or frozen mid-run: it is replaced, the
 * messages it held come back through reclaim, and every job completes.
 */
class MasterOnRedisTest {
    private static final System.Logger LOG = System.getLogger(MasterOnRedisTest.class.getName());
    private static final int JOBS = 60;

    @TempDir
    Path dir;

    @Test
    void killedWorkerIsReplacedAndTheMessagesItHeldComeBack() {
        workerFailureLosesNothing("KILL", MasterEvent.Cause.EXITED);
    }

    @Test
    void frozenWorkerIsReplacedAndTheMessagesItHeldComeBack() {
        workerFailureLosesNothing("STOP", MasterEvent.Cause.HUNG);
    }

    private void workerFailureLosesNothing(String signal, MasterEvent.Cause expectedCause) {
        Fixture fixture = new Fixture();
        List<MasterEvent> events = new CopyOnWriteArrayList<>();
        try (Binomic client = fixture.client()) {
            fixture.submit(client, JOBS, 400);
            try (Master master = new Master(fixture.master(dir, 2).build(), events::add).start()) {
                Fixture.await("8 jobs done", () -> "done " + fixture.ledger.doneJobs().size() + ", events " + events,
                        () -> fixture.ledger.doneJobs().size() >= 8);
                // Signal a worker that holds messages in Redis (pending under its consumer, named
                // host-pid-random): one still starting, or idle at the end of the queue, proves nothing. Either
                // slot's, read afresh each time: one worker JVM may run the first jobs while the other is still
                // starting (its pid is 0 until its JVM runs), and the master may have replaced a worker (a
                // heartbeat missed on a loaded host) before it held anything.
                int[] holding = {-1};
                long[] holder = new long[1];
                Fixture.await("a worker holding messages", () -> "pids " + master.slots().slot(0).pid() + " and "
                        + master.slots().slot(1).pid() + ", " + client.queueStats(fixture.queue) + ", events " + events, () -> {
                    for (int slot = 0; slot < 2; slot++) {
                        long pid = master.slots().slot(slot).pid();
                        if (pid != 0 && pendingOf(fixture, pid) > 0) {
                            holding[0] = slot;
                            holder[0] = pid;
                            return true;
                        }
                    }
                    return false;
                });
                int slot = holding[0];
                long victim = holder[0];
                long inFlight = master.slots().slot(slot).counters().inFlight();
                long restartsBefore = master.restarts(slot);
                long otherRestartsBefore = master.restarts(1 - slot);
                Fixture.signal(victim, signal);

                Fixture.await("a replacement worker", events::toString, () -> replacementOf(events, victim) != null);
                MasterEvent.Replaced replaced = replacementOf(events, victim);
                assertEquals(slot, replaced.slot());
                assertEquals(expectedCause, replaced.cause());
                assertEquals(victim, replaced.oldPid());
                String metrics = io.binomic.core.internal.web.MetricsSource.render(new io.binomic.core.internal.web.BinomicMetrics(client),
                        new io.binomic.core.internal.web.MetricsSource.Slots(master.slots(), master::restarts));
                assertTrue(metrics.lines().anyMatch(l -> l.equals("binomic_worker_restarts_total{slot=\"" + slot + "\"} " + (restartsBefore + 1))),
                        "one restart more of slot " + slot + ": " + events + "\n" + metrics);
                assertTrue(metrics.lines().anyMatch(l -> l.equals("binomic_worker_restarts_total{slot=\"" + (1 - slot) + "\"} " + otherRestartsBefore)),
                        "none of the other slot: " + events + "\n" + metrics);
                assertNotEquals(victim, replaced.newPid());

                Fixture.await("every job done", () -> "done " + fixture.ledger.doneJobs().size() + " of " + JOBS
                        + ", " + client.queueStats(fixture.queue), () -> fixture.ledger.doneJobs().size() == JOBS);
                Fixture.await("the queue empty", () -> client.queueStats(fixture.queue).toString(), () -> {
                    QueueStats s = client.queueStats(fixture.queue);
                    return s.ready() == 0 && s.pending() == 0 && s.delayed() == 0;
                });
                assertEquals(0, client.queueStats(fixture.queue).deadLetters());
                Set<Integer> all = IntStream.range(0, JOBS).boxed().collect(Collectors.toSet());
                assertEquals(all, fixture.ledger.doneJobs());
                List<Integer> executions = fixture.ledger.executions();
                // The victim held messages when it was signalled (awaited above); "every job done" and an
                // empty pending list prove they came back through reclaim. Whether they also ran twice
                // depends on whether their handlers had started before the signal, so only a floor holds.
                assertTrue(executions.size() >= JOBS, executions.size() + " executions for " + JOBS + " jobs (victim had ~"
                        + inFlight + " in flight)");
                LOG.log(System.Logger.Level.INFO, "{0} on Redis: detection to spawn {1} ms, to running {2} ms; {3} executions for {4} jobs",
                        signal, replaced.detectionToSpawn().toMillis(), replaced.detectionToRunning().toMillis(),
                        executions.size(), JOBS);
            }
        }
    }

    /** The replacement of the worker {@code oldPid}, or null while there is none. */
    private static MasterEvent.Replaced replacementOf(List<MasterEvent> events, long oldPid) {
        return events.stream().filter(MasterEvent.Replaced.class::isInstance).map(MasterEvent.Replaced.class::cast)
                .filter(r -> r.oldPid() == oldPid).findFirst().orElse(null);
    }

    /** Entries pending under the consumer of the worker process {@code pid}, from XPENDING's summary. */
    private static long pendingOf(Fixture fixture, long pid) {
        Object summary = fixture.redis.call("XPENDING", "binomic:{" + fixture.queue + "}:stream", "binomic");
        if (!(summary instanceof List<?> parts) || parts.size() < 4 || !(parts.get(3) instanceof List<?> consumers)) {
            return 0;
        }
        long pending = 0;
        for (Object consumer : consumers) {
            List<?> nameAndCount = (List<?>) consumer;
            if (String.valueOf(nameAndCount.get(0)).contains("-" + pid + "-")) {
                pending += Long.parseLong(String.valueOf(nameAndCount.get(1)));
            }
        }
        return pending;
    }
}
