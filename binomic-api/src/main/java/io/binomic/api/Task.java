package io.binomic.api;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A task declaration: a unique name, the queue its messages go to, a {@link TaskMode}, a typed
 * handler and optional per-task overrides of the retry policy. Immutable; validated when built,
 * so a bad declaration fails at start-up and not when the first message arrives.
 *
 * <pre>{@code
 * Task<Greeting, String> greet = Task.builder("greet", Greeting.class, g -> "Hello " + g.name())
 *         .queue("mail").maxAttempts(5).build();
 * Task<Void, Void> report = Task.builder("report", () -> sendReport())
 *         .cron("0 7 * * MON-FRI", ZoneId.of("Europe/Paris")).build();
 * }</pre>
 *
 * @param <A> argument type ({@link Void} for none)
 * @param <R> result type ({@link Void} for none)
 */
public final class Task<A, R> {

    /** The queue a task uses unless {@link Builder#queue(String)} says otherwise. */
    public static final String DEFAULT_QUEUE = "default";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,200}");

    private final String name;
    private final String queue;
    private final TaskMode mode;
    private final Class<A> argumentType;
    private final TaskHandler<A, R> handler;
    private final Duration delay;
    private final CronExpression cron;
    private final ZoneId zone;
    private final Duration interval;
    private final Integer maxAttempts;
    private final Duration timeout;
    private final Backoff backoff;
    private final Set<Class<? extends Throwable>> nonRetryable;

    private Task(Builder<A, R> b) {
        this.name = b.name;
        this.queue = b.queue;
        this.mode = b.mode;
        this.argumentType = b.argumentType;
        this.handler = b.handler;
        this.delay = b.delay;
        this.cron = b.cron;
        this.zone = b.zone;
        this.interval = b.interval;
        this.maxAttempts = b.maxAttempts;
        this.timeout = b.timeout;
        this.backoff = b.backoff;
        this.nonRetryable = Set.copyOf(b.nonRetryable);
    }

    /** Starts a declaration of a task that takes an argument of {@code argumentType}. */
    public static <A, R> Builder<A, R> builder(String name, Class<A> argumentType, TaskHandler<A, R> handler) {
        Objects.requireNonNull(argumentType, "argumentType must not be null (use Task.builder(name, () -> ...) for a task without argument)");
        Objects.requireNonNull(handler, "handler must not be null");
        return new Builder<>(name, argumentType, handler);
    }

    /** Starts a declaration of a task without argument (the shape CRON and INTERVAL tasks need). */
    public static Builder<Void, Void> builder(String name, TaskHandler.NoArgument handler) {
        Objects.requireNonNull(handler, "handler must not be null");
        return new Builder<>(name, Void.class, ignored -> {
            handler.run();
            return null;
        });
    }

    public String name() { return name; }

    public String queue() { return queue; }

    public TaskMode mode() { return mode; }

    /** The argument type; {@link Void} when the handler takes none. */
    public Class<A> argumentType() { return argumentType; }

    /** True when the handler takes no argument. */
    public boolean hasNoArgument() { return argumentType == Void.class; }

    /** The handler, for workers. */
    public TaskHandler<A, R> handler() { return handler; }

    /** The delay of a {@link TaskMode#DELAY} task. */
    public Optional<Duration> delay() { return Optional.ofNullable(delay); }

    /** The cron expression of a {@link TaskMode#CRON} task. */
    public Optional<CronExpression> cron() { return Optional.ofNullable(cron); }

    /** The time zone a cron expression is read in; UTC unless declared. */
    public ZoneId zone() { return zone; }

    /** The period of an {@link TaskMode#INTERVAL} task. */
    public Optional<Duration> interval() { return Optional.ofNullable(interval); }

    /** Per-task override of the maximum number of attempts. */
    public OptionalInt maxAttempts() { return maxAttempts == null ? OptionalInt.empty() : OptionalInt.of(maxAttempts); }

    /** Per-task override of the execution timeout. */
    public Optional<Duration> timeout() { return Optional.ofNullable(timeout); }

    /** Per-task override of the backoff. */
    public Optional<Backoff> backoff() { return Optional.ofNullable(backoff); }

    /** The exception types this task declared non-retryable (besides {@link NonRetryableException}). */
    public Set<Class<? extends Throwable>> nonRetryableExceptions() { return nonRetryable; }

    /** True when {@code failure} must not be retried: a {@link NonRetryableException} or a declared type. */
    public boolean isNonRetryable(Throwable failure) {
        if (failure instanceof NonRetryableException) {
            return true;
        }
        for (Class<? extends Throwable> type : nonRetryable) {
            if (type.isInstance(failure)) {
                return true;
            }
        }
        return false;
    }

    @Override
    public String toString() {
        return "Task[" + name + ", queue=" + queue + ", mode=" + mode + "]";
    }

    /**
     * Builds a {@link Task}. Every check runs in {@link #build()}, whose
     * {@link IllegalArgumentException} names the task and the fix.
     */
    public static final class Builder<A, R> {
        private final String name;
        private final Class<A> argumentType;
        private final TaskHandler<A, R> handler;
        private String queue = DEFAULT_QUEUE;
        private TaskMode mode = TaskMode.DIRECT;
        private Duration delay;
        private String cronText;
        private CronExpression cron;
        private ZoneId zone = ZoneOffset.UTC;
        private Duration interval;
        private Integer maxAttempts;
        private Duration timeout;
        private Backoff backoff;
        private final Set<Class<? extends Throwable>> nonRetryable = new LinkedHashSet<>();

        private Builder(String name, Class<A> argumentType, TaskHandler<A, R> handler) {
            this.name = name;
            this.argumentType = argumentType;
            this.handler = handler;
        }

        /** The queue this task's messages go to. Defaults to {@value Task#DEFAULT_QUEUE}. */
        public Builder<A, R> queue(String queue) {
            this.queue = queue;
            return this;
        }

        /**
         * The mode, when set explicitly; {@link #delay(Duration)}, {@link #cron(String)} and
         * {@link #interval(Duration)} set it for you. Defaults to {@link TaskMode#DIRECT}.
         */
        public Builder<A, R> mode(TaskMode mode) {
            this.mode = Objects.requireNonNull(mode, "mode must not be null");
            return this;
        }

        /** Makes this a {@link TaskMode#DELAY} task enqueued {@code delay} after submission. */
        public Builder<A, R> delay(Duration delay) {
            this.mode = TaskMode.DELAY;
            this.delay = delay;
            return this;
        }

        /** Makes this a {@link TaskMode#CRON} task, read in UTC. Standard 5 fields. */
        public Builder<A, R> cron(String expression) {
            return cron(expression, ZoneOffset.UTC);
        }

        /** Makes this a {@link TaskMode#CRON} task read in {@code zone} (DST handled). */
        public Builder<A, R> cron(String expression, ZoneId zone) {
            this.mode = TaskMode.CRON;
            this.cronText = expression;
            this.zone = zone;
            return this;
        }

        /**
         * Makes this an {@link TaskMode#INTERVAL} task fired every {@code period}: at least 1 ms
         * (ticks are whole milliseconds; a fraction of a millisecond is dropped).
         */
        public Builder<A, R> interval(Duration period) {
            this.mode = TaskMode.INTERVAL;
            this.interval = period;
            return this;
        }

        /** Overrides the maximum number of attempts for this task. Defaults to the worker's setting. */
        public Builder<A, R> maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        /** Overrides the execution timeout for this task. Defaults to the worker's setting. */
        public Builder<A, R> timeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /** Overrides the backoff for this task. Defaults to the worker's setting. */
        public Builder<A, R> backoff(Backoff backoff) {
            this.backoff = backoff;
            return this;
        }

        /** Exception types that send a message straight to the dead-letter queue. Defaults to none. */
        @SafeVarargs
        public final Builder<A, R> nonRetryableOn(Class<? extends Throwable>... types) {
            for (Class<? extends Throwable> type : types) {
                nonRetryable.add(Objects.requireNonNull(type, "nonRetryableOn types must not be null"));
            }
            return this;
        }

        /** Validates and builds the declaration. */
        public Task<A, R> build() {
            String who = "task '" + name + "': ";
            if (name == null || !NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("task name must be 1-200 characters of letters, digits, '_', '.', ':' or '-', was '" + name + "'");
            }
            if (queue == null || !NAME.matcher(queue).matches()) {
                throw new IllegalArgumentException(who + "queue must be 1-200 characters of letters, digits, '_', '.', ':' or '-', was '" + queue + "'");
            }
            switch (mode) {
                case DIRECT -> { }
                case DELAY -> {
                    if (delay == null) {
                        throw new IllegalArgumentException(who + "mode DELAY needs a delay: call .delay(Duration.ofSeconds(...))");
                    }
                    if (delay.isNegative() || delay.isZero()) {
                        throw new IllegalArgumentException(who + "delay must be positive, was " + delay + "; use a DIRECT task to run at once");
                    }
                }
                case CRON -> {
                    if (cronText == null) {
                        throw new IllegalArgumentException(who + "mode CRON needs an expression: call .cron(\"*/5 * * * *\")");
                    }
                    if (zone == null) {
                        throw new IllegalArgumentException(who + "cron time zone must not be null; omit it for UTC");
                    }
                    try {
                        cron = CronExpression.parse(cronText);
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException(who + e.getMessage(), e);
                    }
                    requireNoArgument(who);
                }
                case INTERVAL -> {
                    if (interval == null) {
                        throw new IllegalArgumentException(who + "mode INTERVAL needs a period: call .interval(Duration.ofSeconds(...))");
                    }
                    if (interval.isNegative() || interval.isZero()) {
                        throw new IllegalArgumentException(who + "interval must be positive, was " + interval);
                    }
                    if (interval.compareTo(Duration.ofMillis(1)) < 0) {
                        // Ticks are whole epoch milliseconds: a shorter period has no tick at all.
                        throw new IllegalArgumentException(who + "interval must be at least 1 ms (ticks are whole milliseconds), was "
                                + interval);
                    }
                    requireNoArgument(who);
                }
            }
            if (maxAttempts != null && maxAttempts < 1) {
                throw new IllegalArgumentException(who + "maxAttempts must be >= 1, was " + maxAttempts);
            }
            if (timeout != null && (timeout.isNegative() || timeout.isZero())) {
                throw new IllegalArgumentException(who + "timeout must be positive, was " + timeout);
            }
            return new Task<>(this);
        }

        private void requireNoArgument(String who) {
            if (argumentType != Void.class) {
                throw new IllegalArgumentException(who + "a " + mode + " task is fired by the scheduler without argument, but its handler takes "
                        + argumentType.getSimpleName() + "; declare it with Task.builder(name, () -> ...)");
            }
        }
    }
}
