package io.binomic.bench;

import io.binomic.api.TaskBinding;
import io.binomic.api.spi.TaskProvider;
import java.util.List;

/**
 * The application the worker JVMs of {@link BenchSoak}'s master run, found through
 * {@code META-INF/services} like any application's tasks: the bench task on the queue named by the
 * system property {@value #QUEUE_PROPERTY} (the soak passes it with the master's worker JVM options),
 * each job doing nothing. Without the property it binds nothing, so that the tests' masters, which
 * run on the same class path, are not affected.
 */
public final class SoakTasks implements TaskProvider {
    static final String QUEUE_PROPERTY = "bench.soak.queue";

    @Override
    public List<TaskBinding<?, ?>> tasks() {
        String queue = System.getProperty(QUEUE_PROPERTY);
        return queue == null ? List.of() : List.of(BenchWorker.task(queue).handledBy(submitted -> null));
    }
}
