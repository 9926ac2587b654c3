package io.binomic.api;

import io.binomic.api.spi.TaskProvider;
import java.util.Objects;

/**
 * A task and the code that runs it: what a worker needs, and a producer does not. Made by
 * {@link Task#handledBy}; handed to a worker by {@code Binomic.builder().handle(...)} or by a
 * {@link TaskProvider}.
 *
 * @param <A> argument type
 * @param <R> result type
 */
public final class TaskBinding<A, R> {
    private final Task<A, R> task;
    private final TaskHandler<A, R> handler;

    TaskBinding(Task<A, R> task, TaskHandler<A, R> handler) {
        this.task = Objects.requireNonNull(task, "task");
        this.handler = Objects.requireNonNull(handler, "handler");
    }

    public Task<A, R> task() { return task; }

    /** The code that runs the task. */
    public TaskHandler<A, R> handler() { return handler; }

    @Override
    public String toString() { return "TaskBinding[" + task.name() + "]"; }
}
