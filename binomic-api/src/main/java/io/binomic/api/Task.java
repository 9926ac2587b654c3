package io.binomic.api;

import io.binomic.api.internal.Once;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * A task definition: a unique name, the queue its messages go to, the argument and result types,
 * a {@link TaskMode} with its schedule, optional overrides of the retry policy, and how long its
 * jobs' status and result are kept. It carries no code: a producer declares and submits a task
 * without the worker's code, and the worker binds the handler ({@link #handledBy}, or
 * {@code Binomic.builder().handle(task, handler)}). Immutable; validated when built, so a bad
 * definition fails at start-up and not when the first message arrives.
 *
 * {@snippet class=io.binomic.api.JavadocSnippetsTest region=task}
 *
 * @param <A> argument type ({@link Void} for none)
 * @param <R> result type ({@link Void} for none)
 */
public final class Task<A, R> {

    /** The queue a task uses unless {@link Builder#queue(String)} says otherwise. */
    public static final String DEFAULT_QUEUE = "default";

    /** How long the status and result of a task with a result type are kept after its job ends, unless declared. */
    public static final Duration DEFAULT_RESULT_RETENTION = Duration.ofHours(1);

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,200}");

    private final String name;
    private final String queue;
    private final TaskMode mode;
    private final Class<A> argumentType;
    private final Class<R> resultType;
    private final Duration delay;
    private final CronExpression cron;
    private final ZoneId zone;
    private final Duration interval;
    private final Integer maxAttempts;
    private final Duration timeout;
    private final Backoff backoff;
    private final Set<Class<? extends Throwable>> nonRetryable;
    private final Duration statusRetention;
    private final int priority;
    private final Uniqueness uniqueness;
    private final Function<? super A, String> uniqueKey;
    private final Function<? super A, String> debounceKey;
    private final TaskLimits<A> limits;

    private Task(Builder<A, R> b) {
        this.name = b.name;
        this.queue = b.queue.get();
        this.mode = b.mode;
        this.argumentType = b.argumentType;
        this.resultType = b.resultType;
        this.delay = b.delay;
        this.cron = b.cron;
        this.zone = b.zone;
        this.interval = b.interval;
        this.maxAttempts = b.maxAttempts.get();
        this.timeout = b.timeout.get();
        this.backoff = b.backoff.get();
        this.nonRetryable = b.nonRetryable.get();
        this.statusRetention = b.statusRetention.get();
        this.priority = b.priority.get();
        this.uniqueness = b.unique.get();
        this.uniqueKey = b.uniqueKey;
        this.debounceKey = b.debounce.get();
        this.limits = b.limits.build(b.name, b.argumentType);
    }

    /** Starts a definition of a task that takes an {@code argumentType} and returns a {@code resultType}. */
    public static <A, R> Builder<A, R> builder(String name, Class<A> argumentType, Class<R> resultType) {
        Objects.requireNonNull(argumentType, "argumentType must not be null (use Void.class for a task without argument)");
        Objects.requireNonNull(resultType, "resultType must not be null (use Void.class for a task without result)");
        return new Builder<>(name, argumentType, resultType);
    }

    /** Starts a definition of a task that takes an {@code argumentType} and returns nothing. */
    public static <A> Builder<A, Void> builder(String name, Class<A> argumentType) {
        return builder(name, argumentType, Void.class);
    }

    /** Starts a definition of a task without argument or result (the shape CRON and INTERVAL tasks have). */
    public static Builder<Void, Void> builder(String name) { return builder(name, Void.class, Void.class); }

    /** Binds this task to the code that runs it, for a worker. */
    public TaskBinding<A, R> handledBy(TaskHandler<A, R> handler) {
        return new TaskBinding<>(this, Objects.requireNonNull(handler, "handler must not be null"));
    }

    /**
     * Binds this task, which takes no argument, to code that returns nothing.
     *
     * @throws IllegalArgumentException when the task takes an argument
     */
    public TaskBinding<A, R> handledBy(TaskHandler.NoArgument handler) {
        Objects.requireNonNull(handler, "handler must not be null");
        if (!hasNoArgument()) {
            throw new IllegalArgumentException("task '" + name + "' takes a " + argumentType.getSimpleName()
                    + ": bind a handler that takes it, handledBy(argument -> ...)");
        }
        return new TaskBinding<>(this, ignored -> {
            handler.run();
            return null;
        });
    }

    public String name() { return name; }

    public String queue() { return queue; }

    public TaskMode mode() { return mode; }

    /** The argument type; {@link Void} when the task takes none. */
    public Class<A> argumentType() { return argumentType; }

    /** The result type; {@link Void} when the task returns nothing. */
    public Class<R> resultType() { return resultType; }

    /** True when the task takes no argument. */
    public boolean hasNoArgument() { return argumentType == Void.class; }

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

    /** How long a job's status and result are kept after it ends ({@link Builder#keepStatusFor}); zero when not tracked. */
    public Duration statusRetention() { return statusRetention; }

    /** The {@linkplain Priority priority} of this task's jobs unless a submit says otherwise ({@link Builder#priority(int)}). */
    public int priority() { return priority; }

    /** True when the status and result of this task's jobs are kept ({@link #statusRetention()} is positive). */
    public boolean isTracked() { return !statusRetention.isZero(); }

    /** How this task's jobs are unique ({@link Builder#unique}); empty when they are not. */
    public Optional<Uniqueness> uniqueness() { return Optional.ofNullable(uniqueness); }

    /** The key {@link Builder#unique(Uniqueness, Function)} derives from {@code argument}; empty: the argument is the key. */
    public Optional<String> uniqueKeyOf(A argument) {
        return uniqueKey == null ? Optional.empty() : Optional.of(requireKey("unique key", uniqueKey.apply(argument)));
    }

    /** True when this task's jobs are debounced ({@link Builder#debounce}). */
    public boolean isDebounced() { return debounceKey != null; }

    /** The debounce key the task derives from {@code argument} ({@link Builder#debounce}); empty when it is not debounced. */
    public Optional<String> debounceKeyOf(A argument) {
        return debounceKey == null ? Optional.empty() : Optional.of(requireKey("debounce key", debounceKey.apply(argument)));
    }

    private String requireKey(String what, String key) {
        if (key == null || key.isEmpty() || key.length() > 500) {
            throw new IllegalArgumentException("task '" + name + "': the " + what + " function returned "
                    + (key == null ? "null" : key.isEmpty() ? "an empty key" : "a key of " + key.length() + " characters")
                    + "; return 1-500 characters that tell the jobs apart");
        }
        return key;
    }

    /** The flow limits of this task, task-wide and per key ({@link Builder#rateLimit}, {@link Builder#limitKey}, ...). */
    public TaskLimits<A> limits() { return limits; }

    /** True when {@code failure} must not be retried: a {@link NonRetryableException} or a declared type. */
    public boolean isNonRetryable(Throwable failure) {
        return failure instanceof NonRetryableException || nonRetryable.stream().anyMatch(type -> type.isInstance(failure));
    }

    @Override
    public String toString() { return "Task[" + name + ", queue=" + queue + ", mode=" + mode + "]"; }

    /**
     * Builds a {@link Task}. Each setting may be given once, and a task has one mode: a second
     * call is an {@link IllegalArgumentException} naming both. Every other check runs in
     * {@link #build()}, whose {@link IllegalArgumentException} names the task and the fix.
     */
    public static final class Builder<A, R> {
        private final String name;
        private final Class<A> argumentType;
        private final Class<R> resultType;
        private final Once<String> queue;
        private TaskMode mode = TaskMode.DIRECT;
        private String modeCall;
        private Duration delay;
        private String cronText;
        private CronExpression cron;
        private ZoneId zone = ZoneOffset.UTC;
        private Duration interval;
        private final Once<Integer> maxAttempts;
        private final Once<Duration> timeout;
        private final Once<Backoff> backoff;
        private final Once<Set<Class<? extends Throwable>>> nonRetryable;
        private final Once<Duration> statusRetention;
        private final Once<Integer> priority;
        private final Once<Uniqueness> unique;
        private Function<? super A, String> uniqueKey;
        private final Once<Function<? super A, String>> debounce;
        private final TaskLimits.Builder<A> limits;

        private Builder(String name, Class<A> argumentType, Class<R> resultType) {
            this.name = name;
            this.argumentType = argumentType;
            this.resultType = resultType;
            String who = "task '" + name + "': ";
            this.queue = new Once<>(who + "queue", DEFAULT_QUEUE);
            this.maxAttempts = new Once<>(who + "maxAttempts", null);
            this.timeout = new Once<>(who + "timeout", null);
            this.backoff = new Once<>(who + "backoff", null);
            this.nonRetryable = new Once<>(who + "nonRetryableOn", Set.of());
            this.priority = new Once<>(who + "priority", Priority.DEFAULT);
            this.statusRetention = new Once<>(who + "keepStatusFor",
                    resultType == Void.class ? Duration.ZERO : DEFAULT_RESULT_RETENTION);
            this.unique = new Once<>(who + "unique", null);
            this.debounce = new Once<>(who + "debounce", null, f -> "a key function");
            this.limits = new TaskLimits.Builder<>(who);
        }

        /**
         * At most {@code limit} starts of this task's jobs per period, across every worker and host.
         * A job over the limit is not failed and uses no attempt: it waits in the delayed set until
         * the limit allows it (its status says SCHEDULED, with the due time). Defaults to none.
         */
        public Builder<A, R> rateLimit(RateLimit limit) {
            return Once.set(this, limits.rate, Objects.requireNonNull(limit, "rateLimit must not be null; leave it out for none"));
        }

        /**
         * At most {@code max} of this task's jobs running at once, across every worker and host. A
         * job that finds no free slot waits (no attempt used) until one is released. Defaults to none.
         */
        public Builder<A, R> concurrencyLimit(int max) { return Once.set(this, limits.concurrency, max); }

        /**
         * The key of the per-key limits ({@link #rateLimitPerKey}, {@link #concurrencyLimitPerKey}), a
         * function of the argument: a tenant, an API host. Computed where the job is submitted and
         * carried in a header, so a worker decides without decoding the argument. Defaults to none.
         */
        public Builder<A, R> limitKey(Function<? super A, String> key) {
            return Once.set(this, limits.key, Objects.requireNonNull(key, "limitKey must not be null; leave it out for none"));
        }

        /** At most {@code limit} starts per period for each {@link #limitKey key}. Defaults to none. */
        public Builder<A, R> rateLimitPerKey(RateLimit limit) {
            return Once.set(this, limits.keyedRate,
                    Objects.requireNonNull(limit, "rateLimitPerKey must not be null; leave it out for none"));
        }

        /** At most {@code max} jobs running at once for each {@link #limitKey key}. Defaults to none. */
        public Builder<A, R> concurrencyLimitPerKey(int max) { return Once.set(this, limits.keyedConcurrency, max); }

        /** The queue this task's messages go to. Defaults to {@value Task#DEFAULT_QUEUE}. */
        public Builder<A, R> queue(String queue) { return Once.set(this, this.queue, queue); }

        /** Makes this a {@link TaskMode#DELAY} task enqueued {@code delay} after submission. Defaults to DIRECT (at once). */
        public Builder<A, R> delay(Duration delay) {
            setMode(TaskMode.DELAY, "delay(" + delay + ")");
            this.delay = delay;
            return this;
        }

        /** Makes this a {@link TaskMode#CRON} task, read in UTC. Standard 5 fields. */
        public Builder<A, R> cron(String expression) { return cron(expression, ZoneOffset.UTC); }

        /** Makes this a {@link TaskMode#CRON} task read in {@code zone} (DST handled). */
        public Builder<A, R> cron(String expression, ZoneId zone) {
            setMode(TaskMode.CRON, "cron(\"" + expression + "\")");
            this.cronText = expression;
            this.zone = zone;
            return this;
        }

        /**
         * Makes this an {@link TaskMode#INTERVAL} task fired every {@code period}: at least 1 ms
         * (ticks are whole milliseconds; a fraction of a millisecond is dropped).
         */
        public Builder<A, R> interval(Duration period) {
            setMode(TaskMode.INTERVAL, "interval(" + period + ")");
            this.interval = period;
            return this;
        }

        private void setMode(TaskMode newMode, String call) {
            if (modeCall != null) {
                throw new IllegalArgumentException("task '" + name + "': " + modeCall + " and " + call
                        + " both set the mode; a task has one mode: keep one of them");
            }
            this.mode = newMode;
            this.modeCall = call;
        }

        /** Overrides the maximum number of attempts for this task. Defaults to the worker's setting. */
        public Builder<A, R> maxAttempts(int maxAttempts) { return Once.set(this, this.maxAttempts, maxAttempts); }

        /** Overrides the execution timeout for this task. Defaults to the worker's setting. */
        public Builder<A, R> timeout(Duration timeout) { return Once.set(this, this.timeout, timeout); }

        /** Overrides the backoff for this task. Defaults to the worker's setting. */
        public Builder<A, R> backoff(Backoff backoff) {
            return Once.set(this, this.backoff, Objects.requireNonNull(backoff, "backoff must not be null"));
        }

        /** Exception types that send a message straight to the dead-letter queue. Defaults to none. */
        @SafeVarargs
        public final Builder<A, R> nonRetryableOn(Class<? extends Throwable>... types) {
            Set<Class<? extends Throwable>> given = new LinkedHashSet<>();
            for (Class<? extends Throwable> type : types) {
                given.add(Objects.requireNonNull(type, "nonRetryableOn types must not be null"));
            }
            return Once.set(this, nonRetryable, Set.copyOf(given));
        }

        /**
         * Keeps each job's status and result for {@code retention} after it ends, readable by id from
         * any process ({@code Binomic.job(id)}); {@link Duration#ZERO} keeps nothing. Defaults to
         * {@link Task#DEFAULT_RESULT_RETENTION} (one hour) for a task with a result type, and to zero
         * (not tracked, no cost) for a task whose result type is {@link Void}.
         */
        public Builder<A, R> keepStatusFor(Duration retention) {
            return Once.set(this, statusRetention, Objects.requireNonNull(retention, "keepStatusFor retention must not be null"));
        }

        /**
         * The {@linkplain Priority priority} of this task's jobs, from {@value Priority#MIN} (lowest) to
         * {@value Priority#MAX} (highest): within a queue, higher runs first. One submit may override it
         * ({@link SubmitOptions.Builder#priority(int)}). Defaults to {@value Priority#DEFAULT}, the middle.
         */
        public Builder<A, R> priority(int priority) {
            return Once.set(this, this.priority, Priority.require("task '" + name + "': priority", priority));
        }

        /**
         * Makes this task's jobs unique: a submit whose key is held (by a job queued, or running, or
         * submitted within the period, as {@code uniqueness} says) enqueues nothing and returns that
         * job's handle. The key is the argument itself (its encoded form); see
         * {@link #unique(Uniqueness, Function)} to derive it. Defaults to not unique.
         */
        public Builder<A, R> unique(Uniqueness uniqueness) {
            return Once.set(this, unique,
                    Config.nonNull(uniqueness, "task '" + name + "': unique must not be null; leave the setting out for jobs that are not unique"));
        }

        /**
         * {@link #unique(Uniqueness)} with the key derived from the argument, such as
         * {@code account -> account.id()}: jobs with the same key (for this task and queue) are duplicates.
         * The function must return 1-500 characters.
         */
        public Builder<A, R> unique(Uniqueness uniqueness, Function<? super A, String> key) {
            Config.nonNull(key, "task '" + name + "': the unique key function must not be null; use unique(uniqueness) to key by the argument");
            unique(uniqueness);
            this.uniqueKey = key;
            return this;
        }

        /**
         * Debounces this DELAY task by the key derived from the argument: a submit while a job with
         * the same key is still waiting for its due time replaces that job's argument and pushes its
         * due time to this submit's; one after it became due schedules a new job. The function must
         * return 1-500 characters. Defaults to no debounce.
         */
        public Builder<A, R> debounce(Function<? super A, String> key) {
            return Once.set(this, debounce,
                    Config.nonNull(key, "task '" + name + "': debounce key function must not be null; leave the setting out for no debounce"));
        }

        /** Validates and builds the definition. */
        public Task<A, R> build() {
            String who = "task '" + name + "': ";
            if (name == null || !NAME.matcher(name).matches()) {
                throw new IllegalArgumentException("task name must be 1-200 characters of letters, digits, '_', '.', ':' or '-', was '" + name + "'");
            }
            String q = queue.get();
            if (q == null || !NAME.matcher(q).matches()) {
                throw new IllegalArgumentException(who + "queue must be 1-200 characters of letters, digits, '_', '.', ':' or '-', was '" + q + "'");
            }
            switch (mode) {
                case DIRECT -> { }
                case DELAY -> {
                    if (delay == null || !delay.isPositive()) {
                        throw new IllegalArgumentException(who + "delay must be positive, was " + delay + "; use a DIRECT task to run at once");
                    }
                }
                case CRON -> {
                    if (cronText == null) {
                        throw new IllegalArgumentException(who + "cron needs an expression, such as \"*/5 * * * *\"");
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
                    if (interval == null || !interval.isPositive()) {
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
            if (maxAttempts.get() != null) {
                Config.requireAtLeast(who + "maxAttempts", 1, maxAttempts.get());
            }
            if (timeout.get() != null) {
                Config.requirePositive(who + "timeout", timeout.get());
            }
            Duration retention = statusRetention.get();
            if (retention.isNegative()) {
                throw new IllegalArgumentException(who + "keepStatusFor must not be negative, was " + retention
                        + "; use Duration.ZERO to keep nothing");
            }
            if (unique.get() != null && debounce.get() != null) {
                throw new IllegalArgumentException(who + "unique and debounce are both set: a duplicate of a unique job is dropped,"
                        + " one of a debounced job replaces it; keep one of them");
            }
            if (debounce.get() != null && mode != TaskMode.DELAY) {
                throw new IllegalArgumentException(who + "debounce needs a DELAY task (delay(...)): only a job that waits for its due"
                        + " time can be replaced; or give the delay with each submit (SubmitOptions.delay) and debounce there");
            }
            if (unique.get() != null && (mode == TaskMode.CRON || mode == TaskMode.INTERVAL)) {
                throw new IllegalArgumentException(who + withArticle(mode) + " task cannot be unique: the scheduler fires each tick once already");
            }
            limits.build(name, argumentType); // validates
            return new Task<>(this);
        }

        /** "a CRON", "an INTERVAL": the article as the mode's name is spoken. */
        private static String withArticle(TaskMode mode) { return (mode == TaskMode.INTERVAL ? "an " : "a ") + mode; }

        private void requireNoArgument(String who) {
            if (argumentType != Void.class) {
                throw new IllegalArgumentException(who + withArticle(mode) + " task is fired by the scheduler without argument, but it takes "
                        + argumentType.getSimpleName() + "; declare it with Task.builder(name)");
            }
        }
    }
}
