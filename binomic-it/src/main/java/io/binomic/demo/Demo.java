package io.binomic.demo;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetterGroup;
import io.binomic.api.DeadLetterReason;
import io.binomic.api.JobCancelledException;
import io.binomic.api.JobFailedException;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.JobTimeoutException;
import io.binomic.api.NonRetryableException;
import io.binomic.api.Task;
import io.binomic.api.TaskContext;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.TaskStats;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Every task mode and every ending of a job, in one JVM on the embedded broker: DIRECT, DELAY,
 * INTERVAL and CRON tasks; a task that fails twice then succeeds; one that times out; one that is
 * dead-lettered at once; a DELAY job cancelled before it is due. The task definitions live in
 * {@link Tasks}, apart from the code: the handlers are bound where the worker is built. The demo
 * waits on each job's handle for its outcome and prints it, in submission order, then a summary;
 * it exits 0 (1 if an outcome is not the expected one).
 */
public final class Demo {
    /** How long the demo waits for any one outcome. */
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** A task argument: records are the idiom. */
    public record Greeting(String name) { }

    /** Another argument type. */
    public record Email(String to, String subject) { }

    /** Another argument type. */
    public record Payment(String account, long cents) { }

    /**
     * The task definitions: what a producer and a worker share. They carry no code, so a producer
     * submits them without the worker's handlers (or its dependencies) on its class path.
     */
    public static final class Tasks {
        private Tasks() { }

        /** DIRECT, with a result: the result is kept (one hour by default) and read from the job's handle. */
        public static final Task<Greeting, String> GREET = Task.builder("greet", Greeting.class, String.class).build();

        public static final Task<Email, String> SEND_EMAIL = Task.builder("send-email", Email.class, String.class)
                .queue("mail").build();

        /** DELAY, without a result: its status is kept only because it says so, so that it can be awaited and cancelled. */
        public static final Task<Void, Void> CLEANUP = Task.builder("cleanup-uploads")
                .delay(Duration.ofSeconds(2)).keepStatusFor(Duration.ofMinutes(10)).build();

        /** INTERVAL: the scheduler fires it; nobody submits it. */
        public static final Task<Void, Void> HEARTBEAT = Task.builder("heartbeat").interval(Duration.ofSeconds(3)).build();

        /** CRON, with seconds. */
        public static final Task<Void, Void> REPORT = Task.builder("report").cron("*/10 * * * * *").build();

        /** Fails twice (a busy gateway), then succeeds on its third attempt. */
        public static final Task<Payment, String> CAPTURE = Task.builder("capture-payment", Payment.class, String.class).build();

        /** Runs past its timeout on both of its attempts: dead-lettered. */
        public static final Task<Payment, String> EXPORT = Task.builder("slow-export", Payment.class, String.class)
                .timeout(Duration.ofSeconds(1)).maxAttempts(2).build();

        /** Throws a non-retryable exception: dead-lettered at once. */
        public static final Task<Payment, String> CHARGE = Task.builder("charge-card", Payment.class, String.class).build();
    }

    private Demo() { }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$-7s %5$s%6$s%n");
        CountDownLatch twoHeartbeats = new CountDownLatch(2);
        CountDownLatch oneReport = new CountDownLatch(1);

        BinomicConfig config = BinomicConfig.builder()
                .brokerUrl("memory://")
                .taskDefaults(TaskDefaults.builder().maxAttempts(3).backoff(Backoff.DEFAULT).build())
                .worker(WorkerConfig.builder().concurrency(5).pollTimeout(Duration.ofMillis(200)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();

        // The worker side: each definition bound to its handler.
        Binomic.Builder builder = Binomic.builder().config(config)
                .handle(Tasks.GREET, g -> "Hello, " + g.name() + "!")
                .handle(Tasks.SEND_EMAIL, e -> "sent '" + e.subject() + "' to " + e.to())
                .handle(Tasks.CLEANUP, () -> { })
                .handle(Tasks.HEARTBEAT, twoHeartbeats::countDown)
                .handle(Tasks.REPORT, oneReport::countDown)
                .handle(Tasks.CAPTURE, p -> {
                    int attempt = TaskContext.current().attempt();
                    if (attempt < 3) {
                        throw new IllegalStateException("payment gateway busy (attempt " + attempt + ")");
                    }
                    return "captured " + p.cents() + " cents from " + p.account();
                })
                .handle(Tasks.EXPORT, p -> {
                    Thread.sleep(Duration.ofSeconds(10));
                    return "never";
                })
                .handle(Tasks.CHARGE, p -> {
                    throw new NonRetryableException("card of " + p.account() + " was declined");
                });

        List<String> unexpected = new ArrayList<>();
        try (Binomic binomic = builder.build().start()) {
            Worker worker = binomic.startWorker();

            // The producer side: submit returns a handle on each job.
            JobHandle<String> greeting = binomic.submit(Tasks.GREET, new Greeting("Ada"));
            List<JobHandle<String>> emails = binomic.submitAll(Tasks.SEND_EMAIL, List.of(new Email("ada@example.com", "Welcome"),
                    new Email("alan@example.com", "Your invoice"), new Email("grace@example.com", "Reset password")));
            JobHandle<Void> cleanup = binomic.submit(Tasks.CLEANUP);
            JobHandle<Void> secondCleanup = binomic.submit(Tasks.CLEANUP);
            JobHandle<String> capture = binomic.submit(Tasks.CAPTURE, new Payment("acct-42", 1999));
            JobHandle<String> export = binomic.submit(Tasks.EXPORT, new Payment("acct-7", 100));
            JobHandle<String> charge = binomic.submit(Tasks.CHARGE, new Payment("acct-13", 500));

            JobHandle.CancelOutcome cancel = secondCleanup.cancel();
            System.out.println("cancel of the second cleanup-uploads job, 2 s before it is due: " + cancel);
            expect(unexpected, "cancel of a scheduled DELAY job", JobHandle.CancelOutcome.CANCELLED, cancel);

            System.out.println();
            System.out.println("=== Outcomes, from each job's handle ===");
            expectOutcome(unexpected, "greet", greeting, JobState.SUCCEEDED, 1, "Hello, Ada!");
            expectOutcome(unexpected, "send-email", emails.get(0), JobState.SUCCEEDED, 1, "sent 'Welcome' to ada@example.com");
            expectOutcome(unexpected, "send-email", emails.get(1), JobState.SUCCEEDED, 1, "sent 'Your invoice' to alan@example.com");
            expectOutcome(unexpected, "send-email", emails.get(2), JobState.SUCCEEDED, 1,
                    "sent 'Reset password' to grace@example.com");
            expectOutcome(unexpected, "cleanup-uploads", cleanup, JobState.SUCCEEDED, 1, null);
            expectOutcome(unexpected, "cleanup-uploads", secondCleanup, JobState.CANCELLED, 0, null);
            expectOutcome(unexpected, "capture-payment", capture, JobState.SUCCEEDED, 3, "captured 1999 cents from acct-42");
            expectOutcome(unexpected, "slow-export", export, JobState.DEAD_LETTERED, 2, DeadLetterReason.MAX_ATTEMPTS);
            expectOutcome(unexpected, "charge-card", charge, JobState.DEAD_LETTERED, 1, DeadLetterReason.NON_RETRYABLE);

            boolean heartbeats = twoHeartbeats.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            System.out.println("heartbeat        INTERVAL every 3 s: " + (heartbeats ? "fired twice" : "did not fire twice within " + WAIT));
            boolean report = oneReport.await(WAIT.toSeconds(), TimeUnit.SECONDS);
            System.out.println("report           CRON '*/10 * * * * *': " + (report ? "fired" : "did not fire within " + WAIT));
            if (!heartbeats || !report) {
                unexpected.add("a periodic task did not fire");
            }

            worker.stop(Duration.ofSeconds(2));
            printSummary(binomic, worker.counters());
        }
        if (!unexpected.isEmpty()) {
            System.out.println("UNEXPECTED: " + unexpected);
            System.exit(1);
        }
    }

    /**
     * Waits on {@code handle} for the job's outcome, prints it, and notes when it is not the
     * expected one. {@code expected} is the result of a job that succeeds, the dead-letter reason
     * of one that is dead-lettered.
     */
    private static void expectOutcome(List<String> unexpected, String task, JobHandle<?> handle, JobState state, int attempts,
                                      Object expected) {
        Object got;
        String line;
        try {
            Object result = handle.await(WAIT);
            got = result;
            line = "result " + (result == null ? "(none)" : "\"" + result + "\"");
        } catch (JobFailedException e) {
            JobStatus status = handle.status();
            got = status.deadLetterReason().orElse(null);
            line = got + ": " + status.error().orElse("?");
        } catch (JobCancelledException e) {
            got = null;
            line = "never ran";
        } catch (JobTimeoutException e) {
            got = null;
            line = e.getMessage();
        }
        JobStatus status = handle.status();
        System.out.println(String.format("%-16s %-13s attempts %d  %s", task, status.state(), status.attempt(), line));
        expect(unexpected, task + " state", state, status.state());
        expect(unexpected, task + " attempts", attempts, status.attempt());
        expect(unexpected, task + " outcome", expected, got);
    }

    private static void expect(List<String> unexpected, String what, Object expected, Object actual) {
        if (!Objects.equals(expected, actual)) {
            unexpected.add(what + ": expected " + expected + ", was " + actual);
        }
    }

    private static void printSummary(Binomic binomic, WorkerCounters counters) {
        System.out.println();
        System.out.println("=== Summary ===");
        // Durations are left out: they depend on the machine. The periodic tasks' counts depend on
        // when the CRON task first fired (within 10 s of the start).
        System.out.println(String.format("worker: %d succeeded, %d failed attempts, %d retried, %d dead-lettered",
                counters.succeeded(), counters.failed(), counters.retried(), counters.deadLettered()));
        System.out.println(String.format("%-8s %-16s %9s %6s %7s %12s", "queue", "task", "succeeded", "failed", "retried", "dead-letter"));
        for (TaskStats s : binomic.taskStats()) {
            System.out.println(String.format("%-8s %-16s %9d %6d %7d %12d", s.queue(), s.task(), s.succeeded(), s.failed(), s.retried(),
                    s.deadLettered()));
        }
        System.out.println("dead letters by failure class:");
        for (String queue : binomic.deadLetters().queues()) {
            for (DeadLetterGroup g : binomic.deadLetters().groups(queue)) {
                System.out.println(String.format("  %-8s %-14s %-14s %-45s x%d", g.queue(), g.task(), g.reason(), g.errorClass(),
                        g.count()));
            }
        }
    }
}
