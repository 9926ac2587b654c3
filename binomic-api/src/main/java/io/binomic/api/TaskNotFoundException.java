package io.binomic.api;

import java.io.Serial;

/** A message names a task that no {@link TaskRegistry} in this process knows. */
public class TaskNotFoundException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;
    private final String taskName;

    public TaskNotFoundException(String taskName, String hint) {
        super("no task named '" + taskName + "' is registered in this process; " + hint);
        this.taskName = taskName;
    }

    /** The name the message asked for. */
    public String taskName() { return taskName; }
}
