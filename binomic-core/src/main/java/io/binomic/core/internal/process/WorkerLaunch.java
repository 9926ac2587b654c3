package io.binomic.core.internal.process;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * What a worker JVM is told at launch, and its encoding as program arguments. The master encodes
 * it with {@link #toArgs()}, the worker decodes it with {@link #parse(List)}; keeping both sides
 * in one class keeps them in step. The broker URL is not an argument: it may carry a password,
 * and a process's arguments are visible to every user of the machine, so it travels in the
 * environment variable {@value #BROKER_URL_ENV} instead.
 *
 * @param slot the worker's slot index in the segment
 * @param segment the master's segment file
 * @param queues queues to consume; empty means every queue of the discovered tasks
 * @param concurrency tasks the worker runs at once
 * @param heartbeatInterval how often the worker writes its heartbeat
 * @param shutdownGrace how long a draining worker waits for running tasks
 * @param leaseTimeout the worker's {@code WorkerConfig.leaseTimeout}
 * @param reclaimInterval the worker's {@code WorkerConfig.reclaimInterval}
 */
public record WorkerLaunch(int slot, Path segment, List<String> queues, int concurrency, Duration heartbeatInterval,
                           Duration shutdownGrace, Duration leaseTimeout, Duration reclaimInterval) {

    /** Environment variable that carries the broker URL to a worker JVM (and, optionally, to the CLI). */
    public static final String BROKER_URL_ENV = "BINOMIC_BROKER_URL";

    public WorkerLaunch {
        if (slot < 0) {
            throw new IllegalArgumentException("--slot must be >= 0, was " + slot);
        }
        Objects.requireNonNull(segment, "segment");
        queues = List.copyOf(queues);
        if (concurrency < 1) {
            throw new IllegalArgumentException("--concurrency must be >= 1, was " + concurrency);
        }
        if (heartbeatInterval.isNegative() || heartbeatInterval.isZero()) {
            throw new IllegalArgumentException("--heartbeat-interval-ms must be positive, was " + heartbeatInterval.toMillis());
        }
        if (shutdownGrace.isNegative()) {
            throw new IllegalArgumentException("--shutdown-grace-ms must not be negative, was " + shutdownGrace.toMillis());
        }
        Objects.requireNonNull(leaseTimeout, "leaseTimeout");
        Objects.requireNonNull(reclaimInterval, "reclaimInterval");
    }

    /** The program arguments that {@link #parse(List)} turns back into this record. */
    public List<String> toArgs() {
        return List.of(
                "--slot", Integer.toString(slot),
                "--segment", segment.toString(),
                "--queues", String.join(",", queues),
                "--concurrency", Integer.toString(concurrency),
                "--heartbeat-interval-ms", Long.toString(heartbeatInterval.toMillis()),
                "--shutdown-grace-ms", Long.toString(shutdownGrace.toMillis()),
                "--lease-timeout-ms", Long.toString(leaseTimeout.toMillis()),
                "--reclaim-interval-ms", Long.toString(reclaimInterval.toMillis()));
    }

    /**
     * Decodes {@link #toArgs()}.
     *
     * @throws IllegalArgumentException naming the option that is missing, unknown or malformed
     */
    public static WorkerLaunch parse(List<String> args) {
        Integer slot = null;
        Path segment = null;
        List<String> queues = List.of();
        int concurrency = 5;
        Duration heartbeat = Duration.ofSeconds(5);
        Duration grace = Duration.ofSeconds(10);
        Duration lease = Duration.ofSeconds(30);
        Duration reclaim = Duration.ofSeconds(10);
        for (int i = 0; i < args.size(); i += 2) {
            String option = args.get(i);
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException(option + " needs a value");
            }
            String value = args.get(i + 1);
            switch (option) {
                case "--slot" -> slot = parseInt(option, value);
                case "--segment" -> segment = Path.of(value);
                case "--queues" -> queues = value.isBlank() ? List.of() : splitQueues(value);
                case "--concurrency" -> concurrency = parseInt(option, value);
                case "--heartbeat-interval-ms" -> heartbeat = Duration.ofMillis(parseInt(option, value));
                case "--shutdown-grace-ms" -> grace = Duration.ofMillis(parseInt(option, value));
                case "--lease-timeout-ms" -> lease = Duration.ofMillis(parseInt(option, value));
                case "--reclaim-interval-ms" -> reclaim = Duration.ofMillis(parseInt(option, value));
                default -> throw new IllegalArgumentException("unknown option " + option);
            }
        }
        if (slot == null || segment == null) {
            throw new IllegalArgumentException("--slot and --segment are required");
        }
        return new WorkerLaunch(slot, segment, queues, concurrency, heartbeat, grace, lease, reclaim);
    }

    private static List<String> splitQueues(String value) {
        List<String> queues = new ArrayList<>();
        Arrays.stream(value.split(",")).map(String::strip).filter(q -> !q.isEmpty()).forEach(queues::add);
        return queues;
    }

    private static int parseInt(String option, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " must be a whole number, was '" + value + "'", e);
        }
    }
}
