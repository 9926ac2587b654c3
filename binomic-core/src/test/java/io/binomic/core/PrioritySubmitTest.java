package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.binomic.api.BinomicConfig;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Priorities from the task and the submit, run by a worker on the embedded broker. */
class PrioritySubmitTest {

    @Test
    void aWorkerRunsQueuedJobsHighestPriorityFirstFromTheTaskOrTheSubmit() throws Exception {
        Task<String, Void> bulk = Task.builder("bulk", String.class).queue("p").priority(1).build();
        Task<String, Void> plain = Task.builder("plain", String.class).queue("p").build();
        List<String> ran = Collections.synchronizedList(new ArrayList<>());
        BinomicConfig config = BinomicConfig.builder().worker(WorkerConfig.builder().queues("p").concurrency(1).build()).build();
        try (Binomic binomic = Binomic.builder().config(config).handle(bulk, s -> {
            ran.add(s);
            return null;
        }).handle(plain, s -> {
            ran.add(s);
            return null;
        }).build().start()) {
            binomic.submitAll(bulk, List.of("bulk-1", "bulk-2"));
            binomic.submit(plain, "plain");
            binomic.submit(bulk, "bulk-urgent", SubmitOptions.builder().priority(9).build());
            binomic.submit(plain, "plain-low", SubmitOptions.builder().priority(0).build());
            binomic.startWorker();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (ran.size() < 5 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
        }
        assertEquals(List.of("bulk-urgent", "plain", "bulk-1", "bulk-2", "plain-low"), ran);
    }

    @Test
    void thePriorityHeaderIsReservedAndSubmitJsonChecksTheRange() {
        Task<String, Void> t = Task.builder("t", String.class).build();
        try (Binomic binomic = Binomic.builder().task(t).build().start()) {
            IllegalArgumentException header = assertThrows(IllegalArgumentException.class,
                    () -> binomic.submit(t, "x", Map.of("priority", "9")));
            assertEquals("header 'priority' is reserved: it carries the job's priority; remove it from the headers and use"
                    + " SubmitOptions.builder().priority(n) or Task.Builder.priority(n)", header.getMessage());
            IllegalArgumentException range = assertThrows(IllegalArgumentException.class,
                    () -> binomic.submitJson("default", "t", "\"x\"", 11));
            assertEquals("priority must be from 0 (lowest) to 9 (highest), was 11; leave it out for the default 5", range.getMessage());
        }
    }
}
