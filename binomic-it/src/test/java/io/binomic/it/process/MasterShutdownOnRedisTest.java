package io.binomic.it.process;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BinomicConfig;
import io.binomic.api.QueueStats;
import io.binomic.core.Binomic;
import io.binomic.core.internal.cli.BinomicCli;
import io.binomic.core.internal.process.JavaCommand;
import io.binomic.core.internal.process.WorkerSlots;
import io.binomic.core.internal.process.WorkerState;
import io.binomic.it.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code binomic master} in its own JVM, SIGTERMed while its workers are busy: nothing is lost. */
class MasterShutdownOnRedisTest {
    private static final int JOBS = 30;

    @TempDir
    Path dir;

    @Test
    void sigtermMidRunDrainsWorkersExitsZeroAndLosesNoMessage() throws Exception {
        Fixture fixture = new Fixture();
        try (Binomic client = fixture.client()) {
            // a batch first, alone in the queue, so that its callback runs before the jobs below
            ProcessJobs.Job[] batch = {new ProcessJobs.Job(JOBS, 0), new ProcessJobs.Job(JOBS + 1, 0), new ProcessJobs.Job(JOBS + 2, 0)};
            client.batch().add(ProcessJobs.job(fixture.queue), batch[0]).add(ProcessJobs.job(fixture.queue), batch[1])
                    .onComplete(ProcessJobs.job(fixture.queue), batch[2]).submit();
            // a heartbeat timeout a starved worker meets: a worker replaced as hung mid-run would cut its jobs off
            List<String> args = new ArrayList<>(List.of("master", "--broker", fixture.redis.url(), "--queues", fixture.queue,
                    "--workers", "2", "--concurrency", "2", "--heartbeat-interval", "200ms", "--heartbeat-timeout", "5s",
                    "--shutdown-grace", "3s", "--kill-grace", "1s", "--lease-timeout", "2s", "--reclaim-interval", "500ms",
                    "--state-dir", dir.toString(), "--dashboard-port", "0"));
            fixture.workerJvmOptions().forEach(option -> args.add("--jvm-option=" + option));
            Path log = dir.resolve("master.log");
            Process master = new ProcessBuilder(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args))
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                java.net.URI dashboard = masterDashboardServesTheBatchCallbacksOfItsWorkerJvms(log);
                fixture.submit(client, JOBS, 500);
                Fixture.await("4 jobs done", () -> "master log: " + read(log) + Fixture.workerLogs(dir) + Fixture.threadDumps(master), () -> fixture.ledger.doneJobs().size() >= 4 + batch.length);
                // One worker JVM can run those jobs while the other is still starting (a loaded machine starts JVMs seconds
                // apart), and a worker's pid is in its slot only once its JVM runs: the stop below is checked for both.
                Fixture.await("both workers running", () -> "master log: " + read(log) + Fixture.workerLogs(dir) + Fixture.threadDumps(master),
                        () -> workerPids(dir.resolve("workers.slots")).size() == 2);
                List<Long> workers = workerPids(dir.resolve("workers.slots"));
                masterDashboardShowsEveryWorkerJvm(dashboard, workers);

                master.destroy(); // SIGTERM, mid-run: each worker has tasks running

                assertTrue(master.waitFor(30, TimeUnit.SECONDS), "master exits; log: " + read(log));
                assertEquals(0, master.exitValue(), "master exit code; log: " + read(log));
                assertMasterLoggedItsStop(log, master.pid(), workers);
                List<String> lines = read(log).lines().toList();
                for (int i = 0; i + 1 < lines.size(); i++) {
                    // java.util.logging's two-line records: the source, then the level and the message
                    assertFalse(lines.get(i).contains(" org.redisson.") && lines.get(i + 1).startsWith("INFO:"),
                            "the master prints Redisson's warnings only: " + lines.get(i) + " / " + lines.get(i + 1));
                }
                for (long pid : workers) {
                    assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "worker " + pid + " gone");
                }
                // The grace (3 s) outlasts a task (0.5 s): whatever started, finished and was acknowledged.
                Set<Integer> started = new HashSet<>(fixture.ledger.executions());
                Set<Integer> done = fixture.ledger.doneJobs();
                assertEquals(started, done, "every started job finished within the grace");
                QueueStats after = client.queueStats(fixture.queue);
                assertEquals(0, after.pending(), "nothing left unacknowledged: " + after);
                // A job a worker had read but not started when the stop began is given back as due now: it waits with
                // the delayed jobs until a worker's mover makes it ready.
                assertEquals(JOBS - (done.size() - batch.length), after.ready() + after.delayed(), "the rest waits in the queue: " + after);
                if (after.delayed() > 0) {
                    String workerLogs = read(dir.resolve("logs").resolve("worker-0.log")) + read(dir.resolve("logs").resolve("worker-1.log"));
                    assertTrue(workerLogs.contains("are given back unstarted"), "a delayed job was given back: " + after + "\n" + workerLogs);
                }

                // Another worker takes the rest: every message is still there.
                client.startWorker();
                Fixture.await("all jobs done", () -> client.queueStats(fixture.queue).toString(),
                        () -> fixture.ledger.doneJobs().size() == JOBS + batch.length);
            } finally {
                master.destroyForcibly();
            }
        }
    }

    /**
     * SIGTERM while Redis is down and a worker holds the outcomes of tasks that finished meanwhile: the
     * worker's stop fits the time its master gives it, so it gives those outcomes up and says how many
     * (their deliveries run again after reclaim), then exits on its own before the master would kill it.
     */
    @Test
    void sigtermWhileRedisIsDownLetsTheWorkerGiveUpItsHeldOutcomesAndExitBeforeTheKill() throws Exception {
        Fixture fixture = new Fixture();
        int jobs = 2;
        try (RedisServer broker = RedisServer.startNew()) {
            // submitted before the master starts: the JVMs do not start at once on a small machine
            try (Binomic client = Binomic.builder().config(BinomicConfig.builder().brokerUrl(broker.url())
                    .schedulePeriodicTasks(false).build()).build().start()) {
                client.submitAll(ProcessJobs.job(fixture.queue), List.of(new ProcessJobs.Job(0, 2500), new ProcessJobs.Job(1, 2500)));
            }
            List<String> args = new ArrayList<>(List.of("master", "--broker", broker.url(), "--queues", fixture.queue,
                    "--workers", "1", "--concurrency", "2", "--heartbeat-interval", "200ms", "--heartbeat-timeout", "30s",
                    "--shutdown-grace", "2s", "--kill-grace", "2s", "--lease-timeout", "2s", "--reclaim-interval", "500ms",
                    "--state-dir", dir.toString()));
            // the ledger is on the shared server, which stays up
            fixture.workerJvmOptions().forEach(option -> args.add("--jvm-option=" + option));
            Path log = dir.resolve("master.log");
            Process master = new ProcessBuilder(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args))
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                Fixture.await("both jobs started", () -> "master log: " + read(log) + Fixture.workerLogs(dir) + Fixture.threadDumps(master), () -> fixture.ledger.executions().size() == jobs);
                broker.stop();
                Fixture.await("both jobs done, their outcomes held", () -> "master log: " + read(log),
                        () -> fixture.ledger.doneJobs().size() == jobs);
                Fixture.sleep(500); // their outcomes reach the settler, which cannot write them

                long sigterm = System.nanoTime();
                master.destroy();

                assertTrue(master.waitFor(30, TimeUnit.SECONDS), "master exits; log: " + read(log));
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sigterm);
                String workerLog = read(dir.resolve("logs").resolve("worker-0.log"));
                assertEquals(0, master.exitValue(), "master exit code; log: " + read(log));
                assertTrue(read(log).contains("stopped, exit code 0"), "the worker exited on its own, not killed; master log: "
                        + read(log) + "\nworker log: " + workerLog);
                assertTrue(workerLog.contains(": " + jobs + " outcome(s) could not be written before stopping"), workerLog);
                assertTrue(workerLog.contains(" " + jobs + " outcome(s) not written (given up: their deliveries may run again after reclaim)"),
                        workerLog);
                // The line that ends the worker's stop ends its log: no warning of a reclaim or of closing the broker after it.
                List<String> lines = workerLog.strip().lines().toList();
                assertTrue(lines.getLast().contains(" stopped in ") && lines.getLast().contains(" outcome(s) not written"),
                        "last line: " + lines.getLast() + "\nworker log: " + workerLog);
                // the worker is killed at shutdown grace 2 s + 2 s + the kill grace 2 s; it exits by 4 s, the master after it
                assertTrue(tookMillis < 6_000, "the master took " + tookMillis + " ms to exit; log: " + read(log));

                broker.start();
                try (Binomic client = Binomic.builder().config(BinomicConfig.builder().brokerUrl(broker.url())
                        .schedulePeriodicTasks(false).build()).build().start()) {
                    assertEquals(jobs, client.queueStats(fixture.queue).pending(), "their deliveries stay pending, for reclaim");
                }
            } finally {
                master.destroyForcibly();
            }
        }
    }

    /** A master of one worker at concurrency 2 on the fixture's queue, writing to {@code log}, with short grace and lease. */
    private Process startMasterOfOneWorker(Fixture fixture, Path log) throws IOException {
        return startMasterOfOneWorker(fixture, log, List.of());
    }

    /** The same, its command run by {@code launcher} (a command that ends by running the rest of its arguments). */
    private Process startMasterOfOneWorker(Fixture fixture, Path log, List<String> launcher) throws IOException {
        List<String> args = new ArrayList<>(List.of("master", "--broker", fixture.redis.url(), "--queues", fixture.queue,
                "--workers", "1", "--concurrency", "2", "--heartbeat-interval", "200ms", "--heartbeat-timeout", "5s",
                "--shutdown-grace", "3s", "--kill-grace", "1s", "--lease-timeout", "2s", "--reclaim-interval", "500ms",
                "--state-dir", dir.toString()));
        fixture.workerJvmOptions().forEach(option -> args.add("--jvm-option=" + option));
        List<String> command = new ArrayList<>(launcher);
        command.addAll(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    /**
     * The master's log holds the lines of its stop, in order: the command's line that it drains, the master's own (logged),
     * each worker's exit, the master's last logged line and the command's last. Records logged while the JVM shuts down
     * would be lost: the logging system's own shutdown hook removes its handlers.
     */
    private static void assertMasterLoggedItsStop(Path log, long masterPid, List<Long> workerPids) {
        String text = read(log);
        String master = "master pid " + masterPid;
        int drains = assertLogged(text, master + " draining its workers", 0);
        int drainsLogged = assertLogged(text, master + ": draining " + workerPids.size() + " worker(s), grace 3000 ms", drains);
        int lastWorker = drainsLogged;
        for (int slot = 0; slot < workerPids.size(); slot++) {
            lastWorker = Math.max(lastWorker, assertLogged(text, "worker " + slot + " (pid " + workerPids.get(slot) + ") stopped, exit code 0",
                    drainsLogged));
        }
        int allStopped = assertLogged(text, master + ": all workers stopped", lastWorker);
        assertLogged(text, master + " stopped", allStopped);
    }

    /** Where {@code line} ends in {@code text}, looked for from {@code from} on. */
    private static int assertLogged(String text, String line, int from) {
        int at = text.indexOf(line, from);
        assertTrue(at >= 0, "'" + line + "' after the first " + from + " characters of the master log:\n" + text);
        return at + line.length();
    }

    /** Worker 0's log holds the first and the last line of its stop. */
    private void assertWorkerLoggedItsStop() {
        String text = read(dir.resolve("logs").resolve("worker-0.log"));
        assertTrue(text.contains(" stopping: "), "the stop's first line; worker log: " + text);
        assertTrue(text.contains(" stopped in ") && text.contains(" succeeded"), "the stop's last line; worker log: " + text);
    }

    /**
     * SIGTERM to a worker JVM alone (as a terminal's Ctrl-C, {@code timeout} or a service manager's kill of the
     * control group send it too): the worker drains, its log ends with the lines of its stop, and it exits 0.
     */
    @Test
    void sigtermToTheWorkerAloneDrainsItWithItsStopLinesAndExitZero() throws Exception {
        Fixture fixture = new Fixture();
        try (Binomic client = fixture.client()) {
            Path log = dir.resolve("master.log");
            Process master = startMasterOfOneWorker(fixture, log);
            try {
                fixture.submit(client, 20, 500);
                Fixture.await("2 jobs done", () -> "master log: " + read(log) + Fixture.workerLogs(dir) + Fixture.threadDumps(master), () -> fixture.ledger.doneJobs().size() >= 2);
                List<Long> workers = workerPids(dir.resolve("workers.slots"));
                assertEquals(1, workers.size(), "one worker: " + workers);
                ProcessHandle worker = ProcessHandle.of(workers.getFirst()).orElseThrow();

                assertTrue(worker.destroy(), "SIGTERM sent"); // mid-run: the worker has tasks running

                worker.onExit().get(30, TimeUnit.SECONDS);
                assertWorkerLoggedItsStop();
                Fixture.await("the master says the worker drained on its own", () -> "master log: " + read(log) + Fixture.workerLogs(dir),
                        () -> read(log).contains("worker 0 (pid " + worker.pid() + ") drained and exited with code 0 on its own"));
            } finally {
                master.destroyForcibly();
            }
        }
    }

    /**
     * One signal to the master and its worker at once, as each stop reaches them: a service manager's stop of the control
     * group ({@code timeout}, systemd's default) sends SIGTERM, a terminal's Ctrl-C SIGINT, a closed terminal or a dropped
     * ssh session SIGHUP (found by an outside tester: a hang-up ended workers with 129 and no stop line). Both drain, keep
     * the lines of their stop and exit 0, the worker on its own signal, which the master reports as it stops. The master is
     * started through {@code env --default-signal=...} (GNU coreutils 8.31 or later): a build run in the background by a
     * shell without job control would hand it SIGINT ignored, which a JVM keeps ignoring.
     */
    @ParameterizedTest
    @ValueSource(strings = {"TERM", "INT", "HUP"})
    void aSignalToTheMasterAndItsWorkerAtOnceKeepsTheirStopLinesAndExitsZero(String signal) throws Exception {
        Fixture fixture = new Fixture();
        try (Binomic client = fixture.client()) {
            Path log = dir.resolve("master.log");
            Process master = startMasterOfOneWorker(fixture, log, List.of("env", "--default-signal=" + signal));
            try {
                fixture.submit(client, 20, 500);
                Fixture.await("2 jobs done", () -> "master log: " + read(log) + Fixture.workerLogs(dir) + Fixture.threadDumps(master), () -> fixture.ledger.doneJobs().size() >= 2);
                List<Long> workers = workerPids(dir.resolve("workers.slots"));
                assertEquals(1, workers.size(), "one worker: " + workers);

                Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(master.pid()), String.valueOf(workers.getFirst()))
                        .inheritIO().start();
                assertEquals(0, kill.waitFor(), "kill -" + signal);

                assertTrue(master.waitFor(30, TimeUnit.SECONDS), "master exits; log: " + read(log));
                assertWorkerLoggedItsStop();
                String text = read(log);
                int drains = assertLogged(text, "master pid " + master.pid() + " draining its workers", 0);
                int worker = assertLogged(text, "worker 0 (pid " + workers.getFirst() + ") stopped, exit code 0", drains);
                assertLogged(text, "master pid " + master.pid() + " stopped", worker);
                assertMasterLoggedItsStop(log, master.pid(), workers);
                assertEquals(0, master.exitValue(), "master exit code; log: " + text);
            } finally {
                master.destroyForcibly();
            }
        }
    }

    /**
     * The batch callback its worker JVMs ran is on the master's /metrics, under the names a worker JVM
     * serves it by (a worker JVM records it, where the callback starts); returns the dashboard's address.
     */
    private static java.net.URI masterDashboardServesTheBatchCallbacksOfItsWorkerJvms(Path log) {
        Fixture.await("the dashboard's address in the log", () -> read(log), () -> read(log).contains("dashboard on http://"));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("dashboard on (http://\\S+/) ").matcher(read(log));
        assertTrue(m.find(), read(log));
        java.net.URI base = java.net.URI.create(m.group(1));
        assertEquals("127.0.0.1", base.getHost(), "loopback unless told");
        Fixture.await("the batch's callback counted on the master", () -> get(base.resolve("metrics")), () -> {
            String metrics = get(base.resolve("metrics"));
            return sum(metrics, "binomic_batch_callbacks_started_total{slot=") == 1
                    && sum(metrics, "binomic_batch_callback_lag_seconds_count{slot=") == 1
                    && metrics.lines().anyMatch(l -> l.startsWith("binomic_batch_callback_lag_seconds_bucket{slot=") && l.contains("le=\"+Inf\"} 1"));
        });
        return base;
    }

    private static long sum(String metrics, String prefix) {
        return metrics.lines().filter(l -> l.startsWith(prefix)).mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1))).sum();
    }

    /** The master's /metrics adds up its worker JVMs (promtool accepts it), and its workers page lists them. */
    private static void masterDashboardShowsEveryWorkerJvm(java.net.URI base, List<Long> workers) throws Exception {
        Fixture.await("both worker JVMs counted", () -> get(base.resolve("metrics")), () -> {
            String metrics = get(base.resolve("metrics"));
            return metrics.lines().filter(l -> l.startsWith("binomic_worker_tasks_total{") && l.contains("outcome=\"succeeded\""))
                    .mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf(' ') + 1))).sum() >= 4;
        });
        io.binomic.core.internal.web.Promtool.assertValid(get(base.resolve("metrics")));
        String page = get(base.resolve("workers"));
        assertTrue(page.contains("Worker JVMs of this master"), page);
        for (long pid : workers) {
            assertTrue(page.contains("<td>" + pid + "</td>"), "worker pid " + pid + " on the workers page");
        }
    }

    private static String get(java.net.URI uri) {
        try (var in = uri.toURL().openStream()) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(" + e + ")";
        }
    }

    /** The pids of the running workers, in slot order; a slot whose worker is not running yet is left out. */
    private static List<Long> workerPids(Path segment) {
        try (WorkerSlots slots = WorkerSlots.openReadOnly(segment)) {
            return slots.snapshot().stream().filter(s -> s.state() == WorkerState.RUNNING).map(s -> s.pid()).toList();
        }
    }

    private static String read(Path log) {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
