package io.binomic.api.spi;

import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import java.util.List;

/**
 * Hands an application's tasks, bound to their handlers, to Binomic's worker processes: a worker
 * started by the master discovers them through this SPI on its module path. Declare
 * {@code provides io.binomic.api.spi.TaskProvider with com.example.MyTasks;}. The task
 * definitions themselves ({@link Task}) can live in a module producers share,
 * without the handlers' code.
 */
public interface TaskProvider {

    /** The tasks this provider runs, each bound to its handler ({@link Task#handledBy}). */
    List<TaskBinding<?, ?>> tasks();
}
