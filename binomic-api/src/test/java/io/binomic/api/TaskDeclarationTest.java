package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Task declarations are validated when built, with messages that name the task and the fix. */
class TaskDeclarationTest {

    record Greeting(String name) { }

    private static String rejection(Task.Builder<?, ?> builder) {
        return assertThrows(IllegalArgumentException.class, builder::build).getMessage();
    }

    @Test
    void directTaskGetsTheDefaultQueueAndMode() {
        Task<Greeting, String> greet = Task.builder("greet", Greeting.class, g -> "Hello " + g.name()).build();
        assertEquals("default", greet.queue());
        assertEquals(TaskMode.DIRECT, greet.mode());
        assertEquals(Greeting.class, greet.argumentType());
    }

    @Test
    void eachModeSetterChoosesItsMode() {
        assertEquals(TaskMode.DELAY, Task.builder("d", () -> { }).delay(Duration.ofSeconds(1)).build().mode());
        Task<Void, Void> cron = Task.builder("c", () -> { }).cron("0 7 * * MON-FRI", ZoneId.of("Europe/Paris")).build();
        assertEquals(TaskMode.CRON, cron.mode());
        assertEquals(ZoneId.of("Europe/Paris"), cron.zone());
        assertEquals(TaskMode.INTERVAL, Task.builder("i", () -> { }).interval(Duration.ofMinutes(1)).build().mode());
        assertEquals(ZoneId.of("Z"), Task.builder("u", () -> { }).cron("* * * * *").build().zone());
    }

    @Test
    void modeWithoutItsArgumentIsRejected() {
        assertEquals("task 'd': mode DELAY needs a delay: call .delay(Duration.ofSeconds(...))",
                rejection(Task.builder("d", () -> { }).mode(TaskMode.DELAY)));
        assertEquals("task 'c': mode CRON needs an expression: call .cron(\"*/5 * * * *\")",
                rejection(Task.builder("c", () -> { }).mode(TaskMode.CRON)));
        assertEquals("task 'i': mode INTERVAL needs a period: call .interval(Duration.ofSeconds(...))",
                rejection(Task.builder("i", () -> { }).mode(TaskMode.INTERVAL)));
    }

    @Test
    void nonPositiveDelayOrPeriodIsRejected() {
        assertTrue(rejection(Task.builder("d", () -> { }).delay(Duration.ZERO)).startsWith("task 'd': delay must be positive"));
        assertTrue(rejection(Task.builder("i", () -> { }).interval(Duration.ofSeconds(-5))).startsWith("task 'i': interval must be positive"));
    }

    /** An interval under 1 ms passed build() and failed only at start(), in the scheduler. */
    @Test
    void intervalUnderOneMillisecondIsRejectedByBuild() {
        assertEquals("task 'i': interval must be at least 1 ms (ticks are whole milliseconds), was PT0.0005S",
                rejection(Task.builder("i", () -> { }).interval(Duration.ofNanos(500_000))));
        assertEquals(Duration.ofMillis(1), Task.builder("i", () -> { }).interval(Duration.ofMillis(1)).build().interval().orElseThrow());
    }

    @Test
    void badCronExpressionIsRejectedNamingTheTask() {
        String message = rejection(Task.builder("report", () -> { }).cron("61 * * * *"));
        assertTrue(message.startsWith("task 'report': "), message);
        assertTrue(message.contains("minute"), message);
    }

    @Test
    void periodicTaskWhoseHandlerTakesAnArgumentIsRejected() {
        String cron = rejection(Task.builder("c", Greeting.class, g -> null).cron("* * * * *"));
        assertEquals("task 'c': a CRON task is fired by the scheduler without argument, but its handler takes Greeting;"
                + " declare it with Task.builder(name, () -> ...)", cron);
        String interval = rejection(Task.builder("i", Greeting.class, g -> null).interval(Duration.ofSeconds(1)));
        assertTrue(interval.startsWith("task 'i': a INTERVAL task is fired by the scheduler without argument"), interval);
    }

    @Test
    void invalidNamesAndOverridesAreRejected() {
        assertTrue(rejection(Task.builder("has space", () -> { })).startsWith("task name must be"));
        assertTrue(rejection(Task.builder("t", () -> { }).queue("")).startsWith("task 't': queue must be"));
        assertTrue(rejection(Task.builder("t", () -> { }).maxAttempts(0)).startsWith("task 't': maxAttempts must be >= 1"));
        assertTrue(rejection(Task.builder("t", () -> { }).timeout(Duration.ZERO)).startsWith("task 't': timeout must be positive"));
    }

    @Test
    void duplicateTaskNamesAreRejectedByTheRegistry() {
        Task<Void, Void> a = Task.builder("send", () -> { }).queue("mail").build();
        Task<Void, Void> b = Task.builder("send", () -> { }).queue("sms").build();
        var e = assertThrows(IllegalArgumentException.class, () -> TaskRegistry.of(List.of(a, b)));
        assertEquals("task 'send' is declared twice (queues 'mail' and 'sms'); task names must be unique: rename one of them",
                e.getMessage());
    }

    @Test
    void declaredExceptionTypesAreNonRetryable() {
        Task<Void, Void> t = Task.builder("t", () -> { }).nonRetryableOn(IllegalArgumentException.class).build();
        assertTrue(t.isNonRetryable(new NumberFormatException()), "subclasses count");
        assertTrue(t.isNonRetryable(new NonRetryableException("always")));
        assertEquals(false, t.isNonRetryable(new IllegalStateException()));
    }
}
