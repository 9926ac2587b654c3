package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
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
        Task<Greeting, String> greet = Task.builder("greet", Greeting.class, String.class).build();
        assertEquals("default", greet.queue());
        assertEquals(TaskMode.DIRECT, greet.mode());
        assertEquals(Greeting.class, greet.argumentType());
        assertEquals(String.class, greet.resultType());
        assertFalse(greet.hasNoArgument());
    }

    @Test
    void eachModeSetterChoosesItsMode() {
        assertEquals(TaskMode.DELAY, Task.builder("d").delay(Duration.ofSeconds(1)).build().mode());
        Task<Void, Void> cron = Task.builder("c").cron("0 7 * * MON-FRI", ZoneId.of("Europe/Paris")).build();
        assertEquals(TaskMode.CRON, cron.mode());
        assertEquals(ZoneId.of("Europe/Paris"), cron.zone());
        assertEquals(TaskMode.INTERVAL, Task.builder("i").interval(Duration.ofMinutes(1)).build().mode());
        assertEquals(ZoneId.of("Z"), Task.builder("u").cron("* * * * *").build().zone());
    }

    /**
     * {@code mode(TaskMode)} is gone: a mode is chosen only by the setter that gives its value, so
     * "a mode without its value" can now only be a setter given null. Each is still rejected by
     * build(), naming the task and the fix.
     */
    @Test
    void modeSetterWithoutItsValueIsRejected() {
        assertEquals("task 'd': delay must be positive, was null; use a DIRECT task to run at once",
                rejection(Task.builder("d").delay(null)));
        assertEquals("task 'c': cron needs an expression, such as \"*/5 * * * *\"",
                rejection(Task.builder("c").cron(null)));
        assertEquals("task 'i': interval must be positive, was null",
                rejection(Task.builder("i").interval(null)));
    }

    @Test
    void nonPositiveDelayOrPeriodIsRejected() {
        assertTrue(rejection(Task.builder("d").delay(Duration.ZERO)).startsWith("task 'd': delay must be positive"));
        assertTrue(rejection(Task.builder("i").interval(Duration.ofSeconds(-5))).startsWith("task 'i': interval must be positive"));
    }

    /** An interval under 1 ms passed build() and failed only at start(), in the scheduler. */
    @Test
    void intervalUnderOneMillisecondIsRejectedByBuild() {
        assertEquals("task 'i': interval must be at least 1 ms (ticks are whole milliseconds), was PT0.0005S",
                rejection(Task.builder("i").interval(Duration.ofNanos(500_000))));
        assertEquals(Duration.ofMillis(1), Task.builder("i").interval(Duration.ofMillis(1)).build().interval().orElseThrow());
    }

    @Test
    void badCronExpressionIsRejectedNamingTheTask() {
        String message = rejection(Task.builder("report").cron("61 * * * *"));
        assertTrue(message.startsWith("task 'report': "), message);
        assertTrue(message.contains("minute"), message);
    }

    @Test
    void periodicTaskThatTakesAnArgumentIsRejected() {
        String cron = rejection(Task.builder("c", Greeting.class).cron("* * * * *"));
        assertEquals("task 'c': a CRON task is fired by the scheduler without argument, but it takes Greeting;"
                + " declare it with Task.builder(name)", cron);
        String interval = rejection(Task.builder("i", Greeting.class, String.class).interval(Duration.ofSeconds(1)));
        assertTrue(interval.startsWith("task 'i': an INTERVAL task is fired by the scheduler without argument"), interval);
    }

    @Test
    void invalidNamesAndOverridesAreRejected() {
        assertTrue(rejection(Task.builder("has space")).startsWith("task name must be"));
        assertTrue(rejection(Task.builder("t").queue("")).startsWith("task 't': queue must be"));
        assertTrue(rejection(Task.builder("t").maxAttempts(0)).startsWith("task 't': maxAttempts must be >= 1"));
        assertTrue(rejection(Task.builder("t").timeout(Duration.ZERO)).startsWith("task 't': timeout must be positive"));
        assertTrue(rejection(Task.builder("t", String.class, String.class).keepStatusFor(Duration.ofSeconds(-1)))
                .startsWith("task 't': keepStatusFor must not be negative"));
    }

    @Test
    void duplicateTaskNamesAreRejectedByTheRegistry() {
        Task<Void, Void> a = Task.builder("send").queue("mail").build();
        Task<Void, Void> b = Task.builder("send").queue("sms").build();
        var e = assertThrows(IllegalArgumentException.class, () -> TaskRegistry.of(List.of(a, b)));
        assertEquals("task 'send' is declared twice (queues 'mail' and 'sms'); task names must be unique: rename one of them",
                e.getMessage());
    }

    @Test
    void declaredExceptionTypesAreNonRetryable() {
        Task<Void, Void> t = Task.builder("t").nonRetryableOn(IllegalArgumentException.class).build();
        assertTrue(t.isNonRetryable(new NumberFormatException()), "subclasses count");
        assertTrue(t.isNonRetryable(new NonRetryableException("always")));
        assertEquals(false, t.isNonRetryable(new IllegalStateException()));
    }

    // --- settings given once, one mode ---

    @Test
    void settingGivenTwiceIsRejectedNamingBothValues() {
        var builder = Task.builder("t").queue("a");
        var e = assertThrows(IllegalArgumentException.class, () -> builder.queue("b"));
        assertEquals("task 't': queue is set twice (a, then b); set it once", e.getMessage());

        var attempts = Task.builder("t").maxAttempts(3);
        String message = assertThrows(IllegalArgumentException.class, () -> attempts.maxAttempts(5)).getMessage();
        assertTrue(message.startsWith("task 't': maxAttempts is set twice (3, then 5)"), message);

        var retention = Task.builder("t", String.class, String.class).keepStatusFor(Duration.ofMinutes(5));
        message = assertThrows(IllegalArgumentException.class, () -> retention.keepStatusFor(Duration.ZERO)).getMessage();
        assertTrue(message.startsWith("task 't': keepStatusFor is set twice (PT5M, then PT0S)"), message);

        var timeout = Task.builder("t").timeout(Duration.ofSeconds(1));
        message = assertThrows(IllegalArgumentException.class, () -> timeout.timeout(Duration.ofSeconds(2))).getMessage();
        assertTrue(message.startsWith("task 't': timeout is set twice (PT1S, then PT2S)"), message);
    }

    @Test
    void twoModesAreRejectedNamingBothCalls() {
        var delayed = Task.builder("t").delay(Duration.ofSeconds(5));
        var e = assertThrows(IllegalArgumentException.class, () -> delayed.interval(Duration.ofMinutes(1)));
        assertEquals("task 't': delay(PT5S) and interval(PT1M) both set the mode; a task has one mode: keep one of them",
                e.getMessage());

        var cron = Task.builder("t").cron("* * * * *");
        String message = assertThrows(IllegalArgumentException.class, () -> cron.delay(Duration.ofSeconds(1))).getMessage();
        assertTrue(message.contains("cron(\"* * * * *\")") && message.contains("delay(PT1S)"), message);

        // The same mode twice is two calls too.
        var twice = Task.builder("t").interval(Duration.ofSeconds(1));
        message = assertThrows(IllegalArgumentException.class, () -> twice.interval(Duration.ofSeconds(2))).getMessage();
        assertTrue(message.contains("interval(PT1S)") && message.contains("interval(PT2S)"), message);
    }

    // --- result type and tracking ---

    @Test
    void taskWithoutResultTypeIsVoidAndUntrackedByDefault() {
        Task<String, Void> t = Task.builder("x", String.class).build();
        assertEquals(String.class, t.argumentType());
        assertEquals(Void.class, t.resultType());
        assertFalse(t.isTracked());
        assertEquals(Duration.ZERO, t.statusRetention());

        Task<Void, Void> none = Task.builder("y").build();
        assertEquals(Void.class, none.argumentType());
        assertEquals(Void.class, none.resultType());
        assertTrue(none.hasNoArgument());
        assertFalse(none.isTracked());
    }

    @Test
    void taskWithResultTypeIsTrackedForOneHourByDefault() {
        Task<String, Integer> t = Task.builder("x", String.class, Integer.class).build();
        assertTrue(t.isTracked());
        assertEquals(Duration.ofHours(1), t.statusRetention());
        assertEquals(Task.DEFAULT_RESULT_RETENTION, t.statusRetention());
    }

    @Test
    void keepStatusForZeroUntracksAndAPositiveRetentionTracks() {
        Task<String, Integer> untracked = Task.builder("x", String.class, Integer.class).keepStatusFor(Duration.ZERO).build();
        assertFalse(untracked.isTracked());
        assertEquals(Duration.ZERO, untracked.statusRetention());

        Task<String, Void> tracked = Task.builder("y", String.class).keepStatusFor(Duration.ofMinutes(10)).build();
        assertTrue(tracked.isTracked());
        assertEquals(Duration.ofMinutes(10), tracked.statusRetention());
    }

    // --- handler bindings ---

    @Test
    void handledByBindsTheTaskToItsHandler() throws Exception {
        Task<Greeting, String> greet = Task.builder("greet", Greeting.class, String.class).build();
        TaskBinding<Greeting, String> binding = greet.handledBy(g -> "Hello " + g.name());
        assertSame(greet, binding.task());
        assertEquals("Hello Ada", binding.handler().handle(new Greeting("Ada")));

        int[] runs = {0};
        Task<Void, Void> report = Task.builder("report").cron("* * * * *").build();
        TaskBinding<Void, Void> noArgument = report.handledBy(() -> runs[0]++);
        assertSame(report, noArgument.task());
        assertEquals(null, noArgument.handler().handle(null));
        assertEquals(1, runs[0]);
    }

    @Test
    void noArgumentHandlerOnATaskThatTakesAnArgumentIsRejected() {
        Task<Greeting, Void> t = Task.builder("t", Greeting.class).build();
        var e = assertThrows(IllegalArgumentException.class, () -> t.handledBy(() -> { }));
        assertEquals("task 't' takes a Greeting: bind a handler that takes it, handledBy(argument -> ...)", e.getMessage());
    }
}
