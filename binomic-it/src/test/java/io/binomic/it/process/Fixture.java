package io.binomic.it.process;

import io.binomic.api.BinomicConfig;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.internal.process.MasterConfig;
import io.binomic.it.RedisServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/** Shared set-up of the process tests: a fresh queue and ledger, settings, a submitting client. */
final class Fixture {
    /**
     * The longest a test waits for what a worker JVM does: longer than the master's start timeout (60 s by default), as a
     * worker JVM on a loaded machine took up to 39 s to reach RUNNING in CI, and an await often includes that start.
     */
    static final Duration WAIT = Duration.ofSeconds(120);

    final RedisServer redis = RedisServer.shared();
    final String queue = "proc-" + System.nanoTime();
    final Ledger ledger = new Ledger(redis.host(), redis.port(), queue);

    /** Worker JVM options: small and quick to start, plus the ledger for {@link ProcessJobs}. */
    List<String> workerJvmOptions() {
        return List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-D" + ProcessJobs.LEDGER_PROPERTY + "=" + ledger.spec());
    }

    /** Short intervals, so that failures are detected and leases expire within a test's time. */
    MasterConfig.Builder master(Path stateDirectory, int workers) {
        return MasterConfig.builder()
                .brokerUrl(redis.url())
                .queues(List.of(queue))
                .workers(workers)
                .concurrency(4)
                .heartbeatInterval(Duration.ofMillis(200))
                // not 1 s: a worker's heartbeat thread starved for that long on a loaded machine, and the master rightly
                // replaced a worker the test had not touched
                .heartbeatTimeout(Duration.ofSeconds(3))
                .startTimeout(Duration.ofSeconds(60)) // the default: worker JVMs took up to 39 s to start in CI
                .shutdownGrace(Duration.ofSeconds(3))
                .killGrace(Duration.ofMillis(300))
                .leaseTimeout(Duration.ofSeconds(2))
                .reclaimInterval(Duration.ofMillis(500))
                .stateDirectory(stateDirectory)
                .jvmOptions(workerJvmOptions());
    }

    /** A started client with the job task's handler bound (it runs only if this client also starts a worker). */
    Binomic client() {
        BinomicConfig config = BinomicConfig.builder()
                .brokerUrl(redis.url())
                .schedulePeriodicTasks(false)
                .worker(WorkerConfig.builder().queues(queue).concurrency(8).leaseTimeout(Duration.ofSeconds(2))
                        .reclaimInterval(Duration.ofMillis(500)).pollTimeout(Duration.ofMillis(200)).build())
                .build();
        return Binomic.builder().config(config).handle(ProcessJobs.binding(ledger)).build().start();
    }

    /** Submits jobs 0..count-1, each running {@code sleepMillis}: the definition is all a producer needs. */
    void submit(Binomic client, int count, long sleepMillis) {
        List<ProcessJobs.Job> jobs = new ArrayList<>();
        IntStream.range(0, count).forEach(n -> jobs.add(new ProcessJobs.Job(n, sleepMillis)));
        client.submitAll(ProcessJobs.job(queue), jobs);
    }

    static void await(String what, Supplier<String> state, BooleanSupplier condition) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + WAIT.toSeconds() + " s waiting for " + what + "; " + state.get());
            }
            sleep(50);
        }
    }

    /**
     * The worker logs under {@code stateDir} (the end of each), for a failure message: a worker that never reaches
     * RUNNING says why only there.
     */
    static String workerLogs(Path stateDir) {
        Path logs = stateDir.resolve("logs");
        if (!Files.isDirectory(logs)) {
            return "(no worker logs in " + logs + ")";
        }
        StringBuilder out = new StringBuilder();
        try (Stream<Path> files = Files.list(logs)) {
            for (Path file : files.filter(f -> f.getFileName().toString().matches("worker-\\d+\\.log")).sorted().toList()) {
                String text = Files.readString(file);
                out.append("\n").append(file.getFileName()).append(": ").append(text.substring(Math.max(0, text.length() - 4000)));
            }
        } catch (IOException e) {
            out.append("(worker logs unreadable: ").append(e).append(")");
        }
        return out.toString();
    }

    /** A thread dump of each JVM {@code master} started (its workers), for a failure message: where a stuck start waits. */
    static String threadDumps(Process master) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        StringBuilder out = new StringBuilder();
        master.descendants().forEach(worker -> {
            try {
                Process dump = new ProcessBuilder(jcmd.toString(), Long.toString(worker.pid()), "Thread.print")
                        .redirectErrorStream(true).start();
                String text = new String(dump.getInputStream().readAllBytes());
                dump.waitFor(20, java.util.concurrent.TimeUnit.SECONDS);
                out.append("\nthreads of pid ").append(worker.pid()).append(":\n").append(text, 0, Math.min(text.length(), 30_000));
            } catch (IOException e) {
                out.append("\n(no thread dump of pid ").append(worker.pid()).append(": ").append(e).append(")");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        return out.toString();
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    static void signal(long pid, String signal) {
        try {
            if (new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start().waitFor() != 0) {
                throw new AssertionError("kill -" + signal + " " + pid + " failed");
            }
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
