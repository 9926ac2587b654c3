package io.binomic.core.internal.process;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What a worker JVM is told at launch, and its encoding as program arguments. The master encodes
 * it with {@link #toArgs()}, the worker decodes it with {@link #parse(List)}; keeping both sides
 * in one class keeps them in step. Everything about the broker, the tasks and the worker itself
 * is in the settings file (see {@link Settings}): the master resolves its configuration once and
 * every worker reads the same result. The file, not the arguments, because a broker password must
 * not show in a process listing, and the file is readable by its owner only.
 *
 * @param slot the worker's slot index in the segment
 * @param settings the master's resolved settings file ({@link MasterConfig#workerSettingsFile()})
 */
public record WorkerLaunch(int slot, Path segment, Duration heartbeatInterval, Path settings) {

    public WorkerLaunch {
        if (slot < 0) {
            throw new IllegalArgumentException("--slot must be >= 0, was " + slot);
        }
        Objects.requireNonNull(segment, "segment");
        if (heartbeatInterval.isNegative() || heartbeatInterval.isZero()) {
            throw new IllegalArgumentException("--heartbeat-interval-ms must be positive, was " + heartbeatInterval.toMillis());
        }
        Objects.requireNonNull(settings, "settings");
    }

    /** The program arguments that {@link #parse(List)} turns back into this record. */
    public List<String> toArgs() {
        return List.of(
                "--slot", Integer.toString(slot),
                "--segment", segment.toString(),
                "--heartbeat-interval-ms", Long.toString(heartbeatInterval.toMillis()),
                "--settings", settings.toString());
    }

    /**
     * Decodes {@link #toArgs()}.
     *
     * @throws IllegalArgumentException naming the option that is missing, unknown or malformed
     */
    public static WorkerLaunch parse(List<String> args) {
        Integer slot = null;
        Path segment = null;
        Path settings = null;
        Duration heartbeat = Duration.ofSeconds(5);
        for (int i = 0; i < args.size(); i += 2) {
            String option = args.get(i);
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException(option + " needs a value");
            }
            String value = args.get(i + 1);
            switch (option) {
                case "--slot" -> slot = parseInt(option, value);
                case "--segment" -> segment = Path.of(value);
                case "--heartbeat-interval-ms" -> heartbeat = Duration.ofMillis(parseInt(option, value));
                case "--settings" -> settings = Path.of(value);
                default -> throw new IllegalArgumentException("unknown option " + option);
            }
        }
        if (slot == null || segment == null || settings == null) {
            throw new IllegalArgumentException("--slot, --segment and --settings are required");
        }
        return new WorkerLaunch(slot, segment, heartbeat, settings);
    }

    private static int parseInt(String option, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " must be a whole number, was '" + value + "'", e);
        }
    }
}
