package io.binomic.core.internal.process;

/**
 * What the master asks of a worker through its slot. The codes are part of the segment format:
 * never renumber them.
 */
public enum WorkerCommand {
    /** Keep running. */
    NONE(0),
    /** Stop fetching, let running tasks finish within the shutdown grace, then exit 0. */
    DRAIN(1),
    /** Stop at once: running tasks are cancelled (not acknowledged, so they come back by reclaim); exit 0. */
    STOP(2);

    private final int code;

    WorkerCommand(int code) {
        this.code = code;
    }

    int code() {
        return code;
    }

    static WorkerCommand ofCode(int code) {
        for (WorkerCommand command : values()) {
            if (command.code == code) {
                return command;
            }
        }
        throw new IllegalStateException("unknown worker command code " + code + " in the worker segment");
    }
}
