package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.Task;
import io.binomic.api.WorkerConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/** Operators can see every task execution in a flight recording. */
class JfrEventsTest {

    @Test
    void eachExecutionIsRecordedWithItsAttemptAndOutcome() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Task<Void, Void> flaky = Task.builder("jfr-flaky").backoff(Backoff.fixed(Duration.ofMillis(20))).build();
        BinomicConfig config = BinomicConfig.builder()
                .worker(WorkerConfig.builder().pollTimeout(Duration.ofMillis(100)).build()).build();
        Path file = Files.createTempFile("binomic", ".jfr");
        try (Recording recording = new Recording()) {
            recording.enable("io.binomic.TaskExecution");
            recording.start();
            try (Binomic binomic = Binomic.builder().config(config).handle(flaky, () -> {
                if (calls.incrementAndGet() == 1) {
                    throw new IllegalStateException("first attempt fails");
                }
            }).build().start()) {
                Worker worker = binomic.startWorker();
                binomic.submit(flaky);
                WorkerTest.await("second attempt succeeded", () -> worker.counters().succeeded() == 1);
            }
            recording.stop();
            recording.dump(file);
        }
        List<RecordedEvent> events = RecordingFile.readAllEvents(file).stream()
                .filter(e -> e.getEventType().getName().equals("io.binomic.TaskExecution")).toList();
        Files.delete(file);

        assertEquals(List.of("1 failed", "2 succeeded"),
                events.stream().map(e -> e.getInt("attempt") + " " + e.getString("outcome")).sorted().toList());
        assertEquals("jfr-flaky", events.getFirst().getString("task"));
        assertEquals("default", events.getFirst().getString("queue"));
    }
}
