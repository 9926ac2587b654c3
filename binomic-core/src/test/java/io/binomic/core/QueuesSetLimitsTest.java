package io.binomic.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.QueueLimits;
import io.binomic.api.Task;
import io.binomic.api.spi.Broker;
import io.binomic.core.internal.memory.MemoryBrokerProvider;
import io.binomic.core.internal.memory.MemorySchedulerProvider;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Found by an outside tester: {@code setLimits("ccqq", ...)} took a mistyped queue without a word, where the CLI refuses it. */
class QueuesSetLimitsTest {
    record Job(int n) { }

    private final CapturedWarnings captured = new CapturedWarnings(Queues.class);
    private final List<String> warnings = captured.lines();
    private final Task<Job, Void> work = Task.builder("work", Job.class).queue("ccq").build();
    private final Binomic binomic = Binomic.builder().handle(work, j -> null).build().start();

    @BeforeEach
    void capture() { captured.attach(); }

    @AfterEach
    void close() {
        captured.detach();
        binomic.close();
    }

    @Test
    void limitsOnANameCloseToAKnownQueueAreSetWithAWarningNamingIt() {
        QueueLimits three = QueueLimits.builder().concurrencyLimit(3).build();
        binomic.queues().setLimits("ccqq", three);

        assertEquals(three, binomic.queues().limits("ccqq"), "set as given: a queue may be limited before anything runs on it");
        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.getFirst().startsWith("set limits on queue 'ccqq', which is not known:"), warnings.getFirst());
        assertTrue(warnings.getFirst().contains("did you mean 'ccq'? If 'ccqq' is meant, nothing more is needed"), warnings.getFirst());
        assertTrue(warnings.getFirst().endsWith("setLimits(\"ccqq\", QueueLimits.NONE) and set them on 'ccq'"), warnings.getFirst());

        binomic.queues().setLimits("ccqq", QueueLimits.builder().concurrencyLimit(4).build());
        assertEquals(1, warnings.size(), "its limits make it known: " + warnings);
    }

    @Test
    void limitsOnAKnownQueueOrANewNameFarFromAnyAreSetWithoutAWord() {
        QueueLimits three = QueueLimits.builder().concurrencyLimit(3).build();
        binomic.queues().setLimits("ccq", three);
        binomic.queues().setLimits("payments", three);
        binomic.queues().setLimits("ccqq", QueueLimits.NONE);

        assertEquals(List.of(), warnings);
        assertEquals(three, binomic.queues().limits("payments"));
    }

    @Test
    void aProcessWithoutTasksSuggestsAQueueTheBrokerHolds() {
        Broker shared = new MemoryBrokerProvider().create(BrokerConfig.defaults());
        try (Binomic producer = Binomic.builder().broker(shared).scheduler(new MemorySchedulerProvider().create(shared))
                .handle(work, j -> null).build().start();
             Binomic admin = Binomic.builder().broker(shared).scheduler(new MemorySchedulerProvider().create(shared)).build().start()) {
            producer.submit(work, new Job(1)); // the broker now holds queue ccq
            QueueLimits three = QueueLimits.builder().concurrencyLimit(3).build();

            admin.queues().setLimits("ccqq", three);

            assertEquals(1, warnings.size(), "an admin process knows no task, but the broker knows ccq: " + warnings);
            assertTrue(warnings.getFirst().contains("did you mean 'ccq'?"), warnings.getFirst());
            assertEquals(three, admin.queues().limits("ccqq"), "set as given");
        }
    }
}
