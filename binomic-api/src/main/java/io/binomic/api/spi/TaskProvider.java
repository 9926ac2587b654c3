package io.binomic.api.spi;

import io.binomic.api.Task;
import java.util.List;

/**
 * Hands an application's tasks to Binomic. Worker processes started by the master discover the
 * tasks through this SPI on their module path: declare
 * {@code provides io.binomic.api.spi.TaskProvider with com.example.MyTasks;}.
 */
public interface TaskProvider {

    /** The tasks this provider declares. */
    List<Task<?, ?>> tasks();
}
