package io.binomic.it;

import io.binomic.api.BrokerConfig;
import io.binomic.core.internal.cli.BinomicCli;
import io.binomic.core.internal.process.JavaCommand;
import io.binomic.core.internal.process.SlotSnapshot;
import io.binomic.core.internal.process.WorkerSlots;
import io.binomic.core.internal.process.WorkerState;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code binomic master} of a {@link ChaosDriver} run, in its own JVM, and its worker JVMs as
 * its slot segment shows them: started, stopped (SIGTERM, a drain) and started again on the same
 * state directory. What goes wrong with it is added to the run's problems.
 *
 * <p>It runs this JVM's Binomic, or, for a mixed fleet, the class path of another build (an older
 * release and the chaos application compiled with it): master and workers of one install always
 * come from the same build, so a rolling upgrade mixes whole masters, not worker JVMs of one.
 */
final class ChaosMaster {
    private final String name;
    private final Path dir;
    private final Path stateDir;
    private final Path ledgerDir;
    private final ChaosDriver.Size size;
    private final int workers;
    /** The other build's class path, or null for this JVM's. */
    private final String classPath;
    /** Reads the other build's segment, whose format this build may not read; null for this JVM's build. */
    private final OtherBuildSlots otherBuildSlots;
    private final BrokerConfig broker;
    private final List<String> problems;
    private volatile Process master;

    ChaosMaster(Path dir, Path ledgerDir, ChaosDriver.Size size, BrokerConfig broker, List<String> problems) {
        this("master", dir, ledgerDir, size, size.workers(), null, broker, problems);
    }

    /** A master named {@code name} (its state directory and log are named after it) with {@code workers} workers. */
    ChaosMaster(String name, Path dir, Path ledgerDir, ChaosDriver.Size size, int workers, String classPath, BrokerConfig broker,
                List<String> problems) {
        this.name = name;
        this.dir = dir;
        this.stateDir = dir.resolve(name.equals("master") ? "state" : name + "-state");
        this.ledgerDir = ledgerDir;
        this.size = size;
        this.workers = workers;
        this.classPath = classPath;
        this.otherBuildSlots = classPath == null ? null : new OtherBuildSlots(classPath);
        this.broker = broker;
        this.problems = problems;
    }

    String name() {
        return name;
    }

    Path log() {
        return dir.resolve(name + ".log");
    }

    long pid() {
        return master.pid();
    }

    /** SIGKILL, for the end of a run that failed. */
    void destroy() {
        if (master != null) {
            master.destroyForcibly();
        }
    }

    /** Its worker JVMs that are running; none while the master is replacing them. */
    List<SlotSnapshot> running() {
        try {
            return segment().slots().stream().filter(s -> s.state() == WorkerState.RUNNING && s.pid() != 0
                    && ProcessHandle.of(s.pid()).map(ProcessHandle::isAlive).orElse(false)).toList();
        } catch (RuntimeException e) {
            return List.of(); // no segment yet: the master is starting
        }
    }

    /** A worker segment read at one moment: its master's pid and its slots. */
    record Segment(long masterPid, List<SlotSnapshot> slots) {
    }

    /** The master's segment, read by the build that wrote it; a RuntimeException while there is none. */
    private Segment segment() {
        Path file = stateDir.resolve("workers.slots");
        if (otherBuildSlots != null) {
            return otherBuildSlots.read(file);
        }
        try (WorkerSlots slots = WorkerSlots.openReadOnly(file)) {
            return new Segment(slots.masterPid(), slots.snapshot());
        }
    }

    /** {@code binomic master} in its own JVM, as MasterShutdownOnRedisTest runs it; returns once every worker runs. */
    void start() {
        List<String> args = new ArrayList<>(List.of("master", "--broker", broker.url(), "--queues", String.join(",", ChaosJobs.QUEUES),
                "--workers", Integer.toString(workers), "--concurrency", Integer.toString(size.concurrency()),
                "--heartbeat-interval", millis(size.heartbeat()), "--heartbeat-timeout", millis(size.heartbeatTimeout()),
                "--start-timeout", "60s", "--shutdown-grace", millis(size.shutdownGrace()), "--kill-grace", "1s",
                "--lease-timeout", millis(size.lease()), "--reclaim-interval", "500ms", "--restart-backoff", "500ms",
                "--restart-backoff-max", "5s", "--state-dir", stateDir.toString()));
        for (String option : List.of("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-D" + ChaosJobs.LEDGER_PROPERTY + "=" + ledgerDir, "-D" + ChaosJobs.TICK_PROPERTY + "=" + size.tick().toMillis(),
                "-D" + ChaosJobs.DELAY_PROPERTY + "=" + size.delay().toMillis())) {
            args.add("--jvm-option=" + option);
        }
        List<String> command = new ArrayList<>(JavaCommand.of(BinomicCli.class, List.of("-Xmx128m"), args));
        int classPathAt = command.indexOf("-cp") + 1;
        command.set(classPathAt, servicesDirectory() + java.io.File.pathSeparator + (classPath == null ? command.get(classPathAt) : classPath));
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log().toFile()));
        builder.environment().keySet().removeIf(k -> k.startsWith("BINOMIC_"));
        broker.options().forEach((option, value) -> builder.environment()
                .put("BINOMIC_BROKER_OPTION_" + option.toUpperCase(java.util.Locale.ROOT).replace('.', '_'), value));
        try {
            master = builder.start();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (running().size() < workers || !ownsSegment()) {
            if (!master.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError(name + " did not get " + workers + " workers running; its log:\n" + ChaosDriver.read(log()));
            }
            ChaosDriver.sleep(100);
        }
    }

    /**
     * A class-path entry that declares {@link ChaosJobs} as a task provider, for the master and so
     * its workers (which get its class path) only: in the test resources it would reach every test
     * that discovers tasks, and the jar RuntimeImageTest builds from them.
     */
    private Path servicesDirectory() {
        Path services = dir.resolve("services");
        try {
            Files.createDirectories(services.resolve("META-INF/services"));
            Files.writeString(services.resolve("META-INF/services/" + io.binomic.api.spi.TaskProvider.class.getName()),
                    ChaosJobs.class.getName() + "\n");
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        return services;
    }

    /** The segment is the new master's, not the one its predecessor left behind. */
    private boolean ownsSegment() {
        try {
            return segment().masterPid() == master.pid();
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** SIGTERM: the master drains its workers and exits 0. Returns its exit code. */
    int stop() {
        master.destroy();
        try {
            if (!master.waitFor(size.shutdownGrace().toMillis() + 30_000, TimeUnit.MILLISECONDS)) {
                problems.add(name + " pid " + master.pid() + " did not exit within the grace after SIGTERM");
                master.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        int exit = master.exitValue();
        if (exit != 0) {
            problems.add(name + " pid " + master.pid() + " exited " + exit + " after SIGTERM");
        }
        return exit;
    }

    private static String millis(Duration d) {
        return d.toMillis() + "ms";
    }
}
