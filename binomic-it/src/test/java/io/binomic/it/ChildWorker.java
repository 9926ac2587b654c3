package io.binomic.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A worker in its own JVM ({@link WorkerProcess}), started with this JVM's java and class path.
 * Its output goes to a file: a child writing to our stdout would corrupt surefire's channel.
 */
final class ChildWorker implements AutoCloseable {
    private final Process process;
    private final Path log;

    private ChildWorker(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    static ChildWorker start(RedisServer redis, String queue, Duration lease, Duration backoff) {
        return start(WorkerProcess.class, List.of(redis.host(), Integer.toString(redis.port()), queue,
                Long.toString(lease.toMillis()), Long.toString(backoff.toMillis())));
    }

    /** A worker JVM on the broker at {@code brokerUrl}, its runs in a ledger on {@code ledgerRedis}. */
    static ChildWorker start(RedisServer ledgerRedis, String brokerUrl, String queue, Duration lease, Duration backoff) {
        return start(WorkerProcess.class, List.of(ledgerRedis.host(), Integer.toString(ledgerRedis.port()), queue,
                Long.toString(lease.toMillis()), Long.toString(backoff.toMillis()), brokerUrl));
    }

    /** A worker JVM running {@code main} with {@code args}; it must print {@code WORKER READY} when it consumes. */
    static ChildWorker start(Class<?> main, List<String> args) {
        try {
            Path log = Files.createTempFile("binomic-worker-", ".log");
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            List<String> command = new java.util.ArrayList<>(List.of(java, "--enable-preview", "-Xmx256m", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"), main.getName()));
            command.addAll(args);
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.to(log.toFile())).start();
            ChildWorker worker = new ChildWorker(process, log);
            // Worker JVMs beside a full CI run took up to 39 s to start (measured on the master's), and one that fails to
            // start exits, which ends this wait at once: a long wait costs nothing.
            worker.awaitLog("WORKER READY", Duration.ofSeconds(120));
            return worker;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Waits until the worker's output contains {@code text}. */
    void awaitLog(String text, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!log().contains(text)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("worker JVM exited with " + process.exitValue() + " before printing '"
                        + text + "'; its output:\n" + log());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("worker JVM did not print '" + text + "' within " + timeout + "; its output:\n" + log());
            }
            RedisServer.sleep(50);
        }
    }

    String log() {
        try {
            return Files.readString(log);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    long pid() {
        return process.pid();
    }

    /** Sends a signal by name ({@code STOP}, {@code CONT}) to the worker JVM. */
    void signal(String name) {
        signal(process.pid(), name);
    }

    /** Sends a signal by name to any process (the chaos suite's worker JVMs belong to a master). */
    static void signal(long pid, String name) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(pid)).start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + name + " " + pid + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** SIGKILL: no shutdown hook, no graceful stop, nothing acked on the way out. */
    void kill9() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        kill9();
    }
}
