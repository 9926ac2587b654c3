package io.binomic.core.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The test mode an application's own unit tests use: what was submitted, run on demand or inline. */
class TestModeTest {
    record Welcome(String email) { }

    static final Task<Welcome, String> WELCOME = Task.builder("welcome", Welcome.class, String.class).queue("mail").build();
    static final Task<Welcome, Void> REMIND = Task.builder("remind", Welcome.class).queue("mail").delay(Duration.ofDays(3)).build();

    /** The application code under test: it only knows a Binomic to submit through. */
    record SignUp(Binomic binomic) {
        JobHandle<String> register(String email) {
            binomic.submit(REMIND, new Welcome(email));
            return binomic.submit(WELCOME, new Welcome(email));
        }
    }

    @Test
    void aTaskWithoutABoundHandlerFailsTheDrainNamingTheTask() {
        try (TestMode jobs = TestMode.manual().handle(WELCOME, w -> "sent").start()) {
            jobs.binomic().submit(REMIND, new Welcome("ada@example.com"));

            IllegalStateException e = assertThrows(IllegalStateException.class, jobs::drain);

            assertTrue(e.getMessage().contains("task 'remind'") && e.getMessage().contains(".handle(task, handler)"), e.getMessage());
        }
    }

    @Test
    void resetDropsQueuedAndDelayedJobsWithoutRunningThemAndForgetsTheSubmissions() {
        List<String> sent = new CopyOnWriteArrayList<>();
        try (TestMode jobs = TestMode.manual().handle(WELCOME, w -> {
            sent.add(w.email());
            return "sent";
        }).handle(REMIND, w -> {
            sent.add("remind " + w.email());
            return null;
        }).start()) {
            new SignUp(jobs.binomic()).register("ada@example.com");

            jobs.reset();

            assertEquals(List.of(), jobs.enqueued());
            assertEquals(0, jobs.drain().succeeded(), "nothing left to run");
            assertEquals(List.of(), sent);
            new SignUp(jobs.binomic()).register("bob@example.com");
            assertEquals(List.of(new Welcome("bob@example.com")), jobs.enqueued(WELCOME));
            assertEquals(2, jobs.drain().succeeded());
        }
    }

    @Test
    void manualModeCollectsJobsAndDrainRunsThemDelayedOnesIncluded() {
        List<String> sent = new CopyOnWriteArrayList<>();
        try (TestMode jobs = TestMode.manual()
                .handle(WELCOME, w -> {
                    sent.add("welcome " + w.email());
                    return "sent to " + w.email();
                })
                .handle(REMIND, w -> {
                    sent.add("remind " + w.email());
                    return null;
                }).start()) {
            JobHandle<String> job = new SignUp(jobs.binomic()).register("ada@example.com");

            assertEquals(List.of(), sent, "nothing runs before drain");
            assertEquals(List.of(new Welcome("ada@example.com")), jobs.enqueued(WELCOME));
            SubmittedJob reminder = jobs.enqueued().getFirst();
            assertEquals("remind", reminder.task());
            assertEquals("mail", reminder.queue());
            assertTrue(reminder.due().isPresent(), "a DELAY job shows when it is due");
            assertEquals(JobState.QUEUED, job.status().state());

            TestMode.DrainResult result = jobs.drain();

            assertEquals(2, result.succeeded());
            assertEquals(List.of("remind ada@example.com", "welcome ada@example.com"), sent.stream().sorted().toList());
            assertEquals("sent to ada@example.com", job.await(Duration.ofSeconds(1)));
        }
    }

    @Test
    void inlineModeRunsAJobAHandlerSubmitsInsideThatSubmit() {
        Task<Welcome, String> signUp = Task.builder("signUp", Welcome.class, String.class).build();
        AtomicReference<Binomic> binomic = new AtomicReference<>();
        List<String> order = new CopyOnWriteArrayList<>();
        try (TestMode jobs = TestMode.inline().handle(WELCOME, w -> {
            order.add("welcome ran");
            return "sent";
        }).handle(signUp, w -> {
            binomic.get().submit(WELCOME, w);
            order.add("welcome submitted");
            return "registered";
        }).start()) {
            binomic.set(jobs.binomic());
            JobHandle<String> job = jobs.binomic().submit(signUp, new Welcome("eve@example.com"));

            assertEquals(List.of("welcome ran", "welcome submitted"), order);
            assertEquals(JobState.SUCCEEDED, job.status().state());
        }
    }

    @Test
    void inlineModeRunsEachJobBeforeSubmitReturnsWithItsRetries() {
        AtomicInteger runs = new AtomicInteger();
        Task<Welcome, String> flaky = Task.builder("flaky", Welcome.class, String.class).maxAttempts(3).build();
        try (TestMode jobs = TestMode.inline().handle(flaky, w -> {
            if (runs.incrementAndGet() < 3) {
                throw new IllegalStateException("smtp down");
            }
            return "ok";
        }).start()) {
            JobHandle<String> job = jobs.binomic().submit(flaky, new Welcome("bob@example.com"));

            assertEquals(3, runs.get(), "run, retried twice, inside submit");
            assertEquals(JobState.SUCCEEDED, job.status().state());
            assertEquals("ok", job.await(Duration.ZERO.plusMillis(1)));
            assertEquals(3, job.status().attempts().size());
        }
    }

    @Test
    void aJobThatKeepsFailingEndsInTheDeadLetterQueue() {
        Task<Welcome, String> doomed = Task.builder("doomed", Welcome.class, String.class).maxAttempts(2).build();
        try (TestMode jobs = TestMode.manual().handle(doomed, w -> {
            throw new IllegalStateException("never");
        }).start()) {
            jobs.binomic().submit(doomed, new Welcome("x@example.com"));

            TestMode.DrainResult result = jobs.drain();

            assertEquals(1, result.retried());
            assertEquals(1, result.deadLettered());
            assertEquals(1, jobs.binomic().deadLetters().list("default", io.binomic.api.DeadLetterFilter.all(), 10).size());
        }
    }
}
