package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.DeadLetterFilter;
import io.binomic.api.Task;
import io.binomic.core.testing.TestMode;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What the test mode logs when a test forgot to bind a handler: nothing severe, only the exception
 * that fails the drain (here, where java.util.logging is on the module graph, to read the log).
 */
class TestModeLogTest {
    record Welcome(String email) { }

    static final Task<Welcome, String> WELCOME = Task.builder("welcome", Welcome.class, String.class).queue("mail").build();
    static final Task<Welcome, Void> REMIND = Task.builder("remind", Welcome.class).queue("mail").build();

    private final List<LogRecord> severe = new CopyOnWriteArrayList<>();
    private final Logger binomicLog = Logger.getLogger("io.binomic");
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() >= Level.SEVERE.intValue()) {
                severe.add(r);
            }
        }

        @Override
        public void flush() { }

        @Override
        public void close() { }
    };

    @BeforeEach
    void capture() {
        binomicLog.addHandler(capture);
    }

    @AfterEach
    void release() {
        binomicLog.removeHandler(capture);
    }

    @Test
    void anUnboundTaskFailsTheDrainWithoutASevereLine() {
        try (TestMode jobs = TestMode.manual().handle(WELCOME, w -> "sent").start()) {
            jobs.binomic().submit(REMIND, new Welcome("ada@example.com"));

            IllegalStateException e = assertThrows(IllegalStateException.class, jobs::drain);

            assertTrue(e.getMessage().contains("task 'remind'"), e.getMessage());
            assertEquals(List.of(), severe.stream().map(r -> r.getLoggerName() + ": " + r.getMessage()).toList(),
                    "the exception says it all: no SEVERE line beside it");
            assertEquals(1, jobs.binomic().deadLetters().count("mail", DeadLetterFilter.all()), "dead-lettered, as on a worker");
        }
    }

    @Test
    void inlineModeFailsTheSubmitOfAnUnboundTaskWithoutASevereLine() {
        try (TestMode jobs = TestMode.inline().handle(WELCOME, w -> "sent").start()) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> jobs.binomic().submit(REMIND, new Welcome("ada@example.com")));

            assertTrue(e.getMessage().contains("task 'remind'"), e.getMessage());
            assertEquals(List.of(), severe.stream().map(r -> r.getLoggerName() + ": " + r.getMessage()).toList());
        }
    }
}
