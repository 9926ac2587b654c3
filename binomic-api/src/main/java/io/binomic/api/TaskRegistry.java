package io.binomic.api;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The tasks a process knows, by unique name. Immutable. */
public final class TaskRegistry {
    private final Map<String, Task<?, ?>> byName;

    private TaskRegistry(Map<String, Task<?, ?>> byName) { this.byName = Collections.unmodifiableMap(byName); }

    /**
     * A registry of {@code tasks}.
     *
     * @throws IllegalArgumentException when two tasks share a name
     */
    public static TaskRegistry of(Collection<? extends Task<?, ?>> tasks) {
        Map<String, Task<?, ?>> map = new LinkedHashMap<>();
        for (Task<?, ?> task : tasks) {
            Task<?, ?> previous = map.putIfAbsent(task.name(), task);
            if (previous != null && previous != task) {
                throw new IllegalArgumentException("task '" + task.name() + "' is declared twice (queues '" + previous.queue()
                        + "' and '" + task.queue() + "'); task names must be unique: rename one of them");
            }
        }
        return new TaskRegistry(map);
    }

    /** The task named {@code name}, if registered. */
    public Optional<Task<?, ?>> find(String name) { return Optional.ofNullable(byName.get(name)); }

    /** Every task, in declaration order. */
    public List<Task<?, ?>> all() { return List.copyOf(byName.values()); }

    /** The queues the tasks use, in declaration order, without duplicates. */
    public List<String> queues() { return byName.values().stream().map(Task::queue).distinct().toList(); }
}
