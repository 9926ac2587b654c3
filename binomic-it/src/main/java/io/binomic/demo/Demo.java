package io.binomic.demo;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.DeadLetterGroup;
import io.binomic.api.NonRetryableException;
import io.binomic.api.Task;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.TaskStats;
import io.binomic.core.Worker;
import io.binomic.core.WorkerCounters;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Every task mode and every ending of a message, in one JVM on the embedded broker: DIRECT,
 * DELAY, INTERVAL and CRON tasks; a task that fails twice then succeeds; one that times out; one
 * that is dead-lettered at once. Prints a summary and exits 0 (1 if something did not happen).
 */
public final class Demo {

    /** A task argument: records are the idiom. */
    public record Email(String to, String subject) { }

    /** Another argument type. */
    public record Payment(String account, long cents) { }

    private Demo() { }

    public static void main(String[] args) throws Exception {
        System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tT.%1$tL %4$-7s %5$s%6$s%n");
        AtomicInteger emails = new AtomicInteger();
        AtomicInteger cleanups = new AtomicInteger();
        AtomicInteger heartbeats = new AtomicInteger();
        AtomicInteger reports = new AtomicInteger();
        AtomicInteger paymentAttempts = new AtomicInteger();

        Task<Email, String> sendEmail = Task.builder("send-email", Email.class, (Email e) -> {
            emails.incrementAndGet();
            say("sent '" + e.subject() + "' to " + e.to());
            return "ok";
        }).queue("mail").build();

        Task<Void, Void> cleanup = Task.builder("cleanup-uploads", () -> {
            cleanups.incrementAndGet();
            say("DELAY task ran 2 s after it was submitted");
        }).delay(Duration.ofSeconds(2)).build();

        Task<Void, Void> heartbeat = Task.builder("heartbeat", () -> say("INTERVAL task fired (#" + heartbeats.incrementAndGet() + ")"))
                .interval(Duration.ofSeconds(3)).build();

        Task<Void, Void> report = Task.builder("report", () -> say("CRON task fired (#" + reports.incrementAndGet() + ", '*/10 * * * * *')"))
                .cron("*/10 * * * * *").build();

        Task<Payment, String> capture = Task.builder("capture-payment", Payment.class, (Payment p) -> {
            int attempt = paymentAttempts.incrementAndGet();
            if (attempt < 3) {
                throw new IllegalStateException("payment gateway busy (attempt " + attempt + ")");
            }
            say("captured " + p.cents() + " cents from " + p.account() + " on attempt " + attempt);
            return "captured";
        }).build();

        Task<Payment, String> export = Task.builder("slow-export", Payment.class, (Payment p) -> {
            Thread.sleep(Duration.ofSeconds(10));
            return "never";
        }).timeout(Duration.ofSeconds(1)).maxAttempts(2).build();

        Task<Payment, ?> charge = Task.builder("charge-card", Payment.class, (Payment p) -> {
            throw new NonRetryableException("card of " + p.account() + " was declined");
        }).build();

        BinomicConfig config = BinomicConfig.builder()
                .brokerUrl("memory://")
                .taskDefaults(TaskDefaults.builder().maxAttempts(3).backoff(Backoff.DEFAULT).build())
                .worker(WorkerConfig.builder().concurrency(5).pollTimeout(Duration.ofMillis(200)).shutdownGrace(Duration.ofSeconds(2)).build())
                .build();

        try (Binomic binomic = Binomic.builder().config(config)
                .tasks(List.of(sendEmail, cleanup, heartbeat, report, capture, export, charge)).build().start()) {
            Worker worker = binomic.startWorker();

            binomic.submitAll(sendEmail, List.of(new Email("ada@example.com", "Welcome"),
                    new Email("alan@example.com", "Your invoice"), new Email("grace@example.com", "Reset password")));
            binomic.submit(cleanup);
            binomic.submit(capture, new Payment("acct-42", 1999));
            binomic.submit(export, new Payment("acct-7", 100));
            binomic.submit(charge, new Payment("acct-13", 500));

            boolean complete = waitUntil(Duration.ofSeconds(45), () -> emails.get() == 3 && cleanups.get() == 1
                    && heartbeats.get() >= 2 && reports.get() >= 1 && worker.counters().succeeded() >= 6
                    && binomic.queueStats("default").deadLetters() == 2);

            worker.stop(Duration.ofSeconds(2));
            printSummary(binomic, worker.counters());
            if (!complete) {
                System.out.println("INCOMPLETE: not every demo step happened within 45 s");
                System.exit(1);
            }
        }
    }

    private static boolean waitUntil(Duration max, BooleanSupplier done) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(100);
        }
        return true;
    }

    private static void printSummary(Binomic binomic, WorkerCounters counters) {
        System.out.println();
        System.out.println("=== Summary ===");
        System.out.printf("worker: %d succeeded, %d failed attempts, %d retried, %d dead-lettered%n",
                counters.succeeded(), counters.failed(), counters.retried(), counters.deadLettered());
        System.out.printf("%-8s %-16s %9s %6s %7s %12s %9s%n", "queue", "task", "succeeded", "failed", "retried", "dead-letter", "mean ms");
        for (TaskStats s : binomic.taskStats()) {
            System.out.printf("%-8s %-16s %9d %6d %7d %12d %9d%n", s.queue(), s.task(), s.succeeded(), s.failed(), s.retried(),
                    s.deadLettered(), s.meanDuration().toMillis());
        }
        System.out.println("dead letters by failure class:");
        for (String queue : binomic.deadLetters().queues()) {
            for (DeadLetterGroup g : binomic.deadLetters().groups(queue)) {
                System.out.printf("  %-8s %-14s %-14s %-45s x%d%n", g.queue(), g.task(), g.reason(), g.errorClass(), g.count());
            }
        }
    }

    private static void say(String text) {
        System.out.println(LocalTime.now().truncatedTo(ChronoUnit.MILLIS) + " TASK    " + text);
    }
}
