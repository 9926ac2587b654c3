package io.binomic.core.internal.worker;

import io.binomic.api.TaskBinding;
import io.binomic.api.TaskDefaults;
import io.binomic.api.spi.PayloadCodec;
import java.util.List;
import java.util.Map;

/**
 * What a worker runs: the queues it reads and the handlers of their tasks.
 *
 * @param queues the logical queues read (every partition of each)
 * @param defaults the defaults of tasks that set nothing themselves
 * @param maxResultBytes the largest encoded result a tracked job's record keeps (the broker's payload limit)
 */
public record WorkerTasks(List<String> queues, TaskDefaults defaults, Map<String, TaskBinding<?, ?>> handlers, PayloadCodec codec,
                          int maxResultBytes) { }
