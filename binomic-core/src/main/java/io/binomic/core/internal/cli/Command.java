package io.binomic.core.internal.cli;

import io.binomic.api.BrokerConfig;
import io.binomic.api.Task;
import io.binomic.core.Binomic;
import io.binomic.core.internal.CoreAccess;
import io.binomic.core.internal.QueueTraces;
import io.binomic.core.internal.process.Settings;
import java.io.PrintStream;
import java.util.LinkedHashSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * One CLI command: its name as typed ({@code queues}, {@code dlq replay}), its help and its action; and what several
 * commands share: the {@code --broker}, {@code --queues} and {@code --create} options and their checks.
 */
abstract class Command {
    static final String DEFAULT_URL = "redis://localhost:6379";
    static final String BROKER_FLAG = "--broker";
    /** Only the shape: the broker provider checks the rest and says what is wrong. */
    private static final Pattern URL = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*://.*");
    static final Option BROKER = Option.value("broker", "URL",
            "broker URL, e.g. redis://user:pass@host:6379/0. Defaults to $" + Settings.BROKER_URL_ENV
                    + ", else broker.url of the --config file, else " + DEFAULT_URL);
    static final Option QUEUES = Option.value("queues", "A,B",
            "comma-separated queues. Defaults to the queues of the tasks found on the module path");
    static final Option ANY_TASK = Option.flag("any-task",
            "use a task name no task on the module path has; without it, a name close to a known task's is refused as a typo"
            + " (known: the tasks on this CLI's module path and those paused in the queue)");
    static final Option CREATE = Option.flag("create",
            "use a queue nothing knows yet (no task, job, consumer, pause or limit of it); without it, one is refused as a typo");
    static final Option ANY_QUEUE = Option.flag("any-queue",
            "use a queue name nothing knows (no task, job, consumer, dead letter, pause or limit of it) as typed; without it, one is"
            + " refused as a typo");

    /**
     * What every command works with.
     *
     * @param env the environment, with the configuration file's {@code broker.url} where the real one has none
     * @param connector opens a broker for the inspection commands
     * @param settings the settings the CLI loaded for this run
     */
    record Context(PrintStream out, PrintStream err, Map<String, String> env, BinomicCli.Connector connector,
                   Supplier<Settings> settings) {

        /** A started Binomic on the broker of {@code --broker} (else the environment's), for {@code queues}. */
        Binomic connect(Arguments args, List<String> queues) throws UsageException {
            return connector.connect(url(args, env), queues);
        }
    }

    /** One of the commands of a group that share their options and code, such as {@code queue pause} and {@code queue resume}. */
    record Verb(String word, String summary, String notes) { }

    /** What a command does on a started Binomic; throws what the caller turns into an exit code. */
    @FunctionalInterface
    interface OnBroker {
        void run(Binomic binomic) throws UsageException;
    }

    /** The words that select it, such as {@code dlq replay}. */
    final String name;
    /** One line for the command list and the top of its help. */
    final String summary;
    /** The options it accepts ({@code --help} is added by the CLI). */
    final List<Option> options;
    /** More help after the options: examples, notes; may be empty. */
    final String notes;
    final PrintStream out;
    final PrintStream err;
    final Context cx;

    Command(Context cx, String name, String summary, List<Option> options, String notes) {
        this.cx = cx;
        this.out = cx.out();
        this.err = cx.err();
        this.name = name;
        this.summary = summary;
        this.options = options;
        this.notes = notes;
    }

    /**
     * Turns positional words at the front of {@code rest} (what follows the command's name) into
     * options, such as {@code queue pause NAME} into {@code --queue NAME}. None by default.
     */
    List<String> takeOperands(List<String> rest) { return rest; }

    /**
     * Why the command does not take option {@code name} that other commands take, when a user may well give it
     * ({@code --broker} to a command that needs no broker): said instead of "unknown option". Empty by default.
     */
    Optional<String> whyNot(String name) { return Optional.empty(); }

    /** {@code rest} with its first word, when it is not an option, given as {@code --option WORD}. */
    static List<String> firstWordAs(String option, List<String> rest) {
        if (rest.isEmpty() || rest.getFirst().startsWith("-")) {
            return rest;
        }
        List<String> rewritten = new ArrayList<>(List.of("--" + option, rest.getFirst()));
        rewritten.addAll(rest.subList(1, rest.size()));
        return rewritten;
    }

    /** Which queues a command looks at: the ones named with {@code --queues}, else those of the discovered tasks. */
    static List<String> queues(Arguments args, Binomic binomic) throws UsageException {
        List<String> named = args.list("queues");
        if (!named.isEmpty()) {
            return named;
        }
        List<String> known = binomic.deadLetters().queues();
        if (known.isEmpty()) {
            throw new UsageException("no queues to look at on " + brokerRead(binomic) + ": name them with --queues, or put the"
                    + " application's modules (its TaskProvider) on the module path");
        }
        return known;
    }

    /**
     * The broker a command read, as its user can check it: the URL with any password masked, as Binomic's start log
     * prints it, and the database and key prefix when they are not the defaults. A read that finds nothing names it:
     * a wrong {@code --broker} or {@code broker.url} otherwise looks like an empty broker.
     */
    static String brokerRead(Binomic binomic) {
        BrokerConfig broker = binomic.config().broker();
        return "broker " + broker.redactedUrl() + (broker.database() == 0 ? "" : " database " + broker.database())
                + (broker.keyPrefix().equals(BrokerConfig.defaults().keyPrefix()) ? "" : " key prefix '" + broker.keyPrefix() + "'");
    }

    /**
     * The broker URL: the option, else the environment variable, else the local Redis. The CLI
     * hands commands an environment in which the variable already holds the configuration file's
     * {@code broker.url} when the real environment has none, so the file's URL comes before the default.
     */
    static String url(Arguments args, Map<String, String> env) throws UsageException {
        String fromEnv = env.get(Settings.BROKER_URL_ENV);
        String url = args.value(BROKER.name()).orElse(fromEnv == null || fromEnv.isBlank() ? DEFAULT_URL : fromEnv);
        if (!URL.matcher(url).matches()) {
            throw new UsageException("--broker must start with a scheme such as redis:// or memory://, was '" + url + "'");
        }
        return url;
    }

    /**
     * Refuses a change to a queue nothing knows, unless {@code --create} is given: a mistyped name
     * ({@code queue pause nc-mian}) would otherwise create keys of a new queue and report success while
     * the real one runs on. A queue counts as known when a task on the module path or the {@code worker.queues}
     * setting names it, or the broker holds anything of it; the refusal names the closest of those names, else of
     * the queues the broker names ({@link QueueTraces#likelyMeant}).
     */
    void requireKnown(Arguments args, Binomic binomic, String queue) throws UsageException {
        requireKnown(args, binomic, queue, CREATE, "for a new queue");
    }

    /**
     * {@link #requireKnown} for a command that creates nothing ({@code dlq list}, {@code dlq replay}): a mistyped name
     * would list, replay or purge nothing and report success. {@code force} means the name as typed, what it does
     * being said by {@code forceMeans} ("to use the name as typed").
     */
    void requireKnown(Arguments args, Binomic binomic, String queue, Option force, String forceMeans) throws UsageException {
        if (args.has(force.name())) {
            return;
        }
        Optional<String> unknown = unknownQueue(binomic, queue);
        if (unknown.isPresent()) {
            throw new UsageException(unknown.get() + (unknown.get().endsWith("?") ? " Else add --" + force.name() + " " + forceMeans
                    : "; check the name, or add --" + force.name() + " " + forceMeans));
        }
    }

    /** {@link #requireKnown(Arguments, Binomic, String, Option, String)} with {@link #ANY_QUEUE} for each queue named with {@code --queues}. */
    void requireKnownNamedQueues(Arguments args, Binomic binomic) throws UsageException {
        for (String queue : args.list("queues")) {
            requireKnown(args, binomic, queue, ANY_QUEUE, "to use the name as typed");
        }
    }

    /**
     * Warns, on stderr, that a command reads a queue nothing knows: its figures are those of an empty
     * queue, which a mistyped name ({@code binomic queues --queues rll}) would show as if they were the real one's.
     */
    void warnIfUnknown(Binomic binomic, String queue) {
        unknownQueue(binomic, queue).ifPresent(why -> err.println("binomic " + name + ": warning: " + why
                + (why.endsWith("?") ? "" : "; check the name") + " (what is shown is an empty queue's)"));
    }

    /** Why {@code queue} counts as unknown ({@link #requireKnown}), with the closest known name; empty when it is known. */
    Optional<String> unknownQueue(Binomic binomic, String queue) {
        Set<String> named = new LinkedHashSet<>(binomic.tasks().queues());
        named.addAll(cx.settings().get().worker().queues());
        if (named.contains(queue) || inBroker(binomic, queue)) {
            return Optional.empty();
        }
        return Optional.of("queue '" + queue + "' is not known: no task on the module path or worker.queues setting names it,"
                + " and the broker holds no job, consumer group, dead letter, pause, limit or recent activity of it"
                + QueueTraces.likelyMeant(CoreAccess.get().broker(binomic), queue, named).map(m -> "; did you mean '" + m + "'?").orElse(""));
    }

    /**
     * Refuses a task name that is most likely a typo, unless {@code --any-task} is given: {@code queue pause mail
     * --task gret} would pause a task no worker runs and report success while {@code greet} runs on. A task is
     * known when a task of {@code queue} on the module path has the name or it is paused in {@code queue}; a task of
     * another queue is refused, as its submit to this queue is. An unknown name is
     * refused when it is close to a known one, and, if {@code strict}, whenever the module path has tasks at all
     * (the CLI then knows the application's tasks); a CLI without the application's modules cannot tell.
     */
    void requireKnownTask(Arguments args, Binomic binomic, String queue, String task, boolean strict) throws UsageException {
        if (args.has(ANY_TASK.name())) {
            return;
        }
        List<String> onPath = binomic.tasks().all().stream().map(Task::name).toList();
        Set<String> paused = binomic.queues().pausedTasks(queue);
        Optional<String> declaredOn = binomic.tasks().find(task).map(Task::queue);
        if (paused.contains(task) || declaredOn.filter(queue::equals).isPresent()) {
            return;
        }
        if (declaredOn.isPresent()) {
            // A task of another queue, as a submit refuses one: no worker runs it on this queue, so it is most likely a typo.
            throw new UsageException("task '" + task + "' is not a task of queue " + queue + ": the task of that name on the module path"
                    + " is declared on queue '" + declaredOn.get() + "', and it is not paused in queue " + queue + "; did you mean task '"
                    + task + "' of queue '" + declaredOn.get() + "'? Else add --any-task to use the name on queue " + queue + " as typed");
        }
        Set<String> known = new LinkedHashSet<>(onPath);
        known.addAll(paused);
        Optional<String> closest = ClosestName.to(task, known);
        if (closest.isPresent() || strict && !onPath.isEmpty()) {
            throw new UsageException("task '" + task + "' is not known: no task on the module path has that name and it is not"
                    + " paused in queue " + queue + closest.map(c -> "; did you mean '" + c + "'? Else add --any-task to use the name as typed")
                            .orElse("; check the name, or add --any-task to use the name as typed"));
        }
    }

    /**
     * Warns, on stderr, that no worker has ever read {@code queue} on this broker (no partition of it has a consumer group):
     * a write there (a pause, limits) holds back no worker, and one meant for the workers' broker, given a wrong
     * {@code --broker}, database or key prefix, would otherwise read as done. The queue's name may be known from the module
     * path all the same, so the name check does not catch it. Nothing is said when the broker cannot tell.
     */
    void warnIfNeverRead(Binomic binomic, String queue) {
        boolean read;
        try {
            read = binomic.queues().partitions(queue).all(queue).stream().anyMatch(CoreAccess.get().broker(binomic)::hasBeenRead);
        } catch (RuntimeException e) {
            return; // a warning is no reason to fail a write that was done
        }
        if (!read) {
            err.println("binomic " + name + ": warning: no worker has read queue '" + queue + "' on " + brokerRead(binomic)
                    + " (it has no consumer group there): workers that run it use another broker, database or key prefix, or none"
                    + " has started yet; check --broker (" + Settings.BROKER_URL_ENV + ", broker.url)");
        }
    }

    /**
     * Refuses the {@code --task} filter of {@code dlq list|replay|purge} when it names no task of {@code queues}, unless
     * {@code --any-task} is given, as {@link #requireKnownTask} refuses a task to pause: a mistyped filter matches nothing and
     * a replay or purge would report "0 replayed". Known: the tasks on the module path declared on one of the queues, the
     * tasks of their dead letters (a job of a task no worker had, dead-lettered as TASK_NOT_FOUND, is one) and the tasks
     * paused there. An unknown name is refused when it is close to a known one, is a task of another queue on the module
     * path, or the module path has tasks at all (the CLI then knows the application's tasks).
     */
    void requireKnownFilterTask(Arguments args, Binomic binomic, List<String> queues) throws UsageException {
        Optional<String> typed = args.value("task");
        if (typed.isEmpty() || args.has(ANY_TASK.name())) {
            return;
        }
        String task = typed.get();
        Optional<String> declaredOn = binomic.tasks().find(task).map(Task::queue);
        if (declaredOn.filter(queues::contains).isPresent()) {
            return;
        }
        Set<String> known = new LinkedHashSet<>();
        for (String queue : queues) {
            binomic.tasks().all().stream().filter(t -> t.queue().equals(queue)).map(Task::name).forEach(known::add);
            known.addAll(binomic.queues().pausedTasks(queue));
            binomic.deadLetters().groups(queue).forEach(g -> known.add(g.task()));
        }
        if (known.contains(task)) {
            return;
        }
        String where = (queues.size() == 1 ? "queue " : "queues ") + String.join(", ", queues);
        if (declaredOn.isPresent()) {
            throw new UsageException("task '" + task + "' is not a task of " + where + ": the task of that name on the module path is"
                    + " declared on queue '" + declaredOn.get() + "', and no dead letter of " + where + " is of it; did you mean --queues "
                    + declaredOn.get() + "? Else add --any-task to use the name as typed");
        }
        Optional<String> closest = ClosestName.to(task, known);
        if (closest.isPresent() || !binomic.tasks().all().isEmpty()) {
            throw new UsageException("task '" + task + "' is not known: no task on the module path has that name and no dead letter of "
                    + where + " is of it" + closest.map(c -> "; did you mean '" + c + "'? Else add --any-task to use the name as typed")
                            .orElse("; check the name, or add --any-task to use the name as typed"));
        }
    }

    /** Whether the broker holds anything of {@code queue} ({@link QueueTraces#inBroker}). */
    private static boolean inBroker(Binomic binomic, String queue) {
        return QueueTraces.inBroker(CoreAccess.get().broker(binomic), binomic.queues(), queue);
    }

    /**
     * Runs {@code action} on a started Binomic of {@code queues} and returns {@link BinomicCli#EXIT_OK}; a value the
     * action's calls refuse ({@link IllegalArgumentException}) is bad usage, not a failed operation. Its message names
     * the problem and the fix, often the queue's state rather than the command line (a limit on a partitioned queue),
     * so no pointer to the command's help follows it.
     */
    int onBroker(Arguments args, List<String> queues, OnBroker action) throws UsageException {
        try (Binomic binomic = cx.connect(args, queues)) {
            try {
                action.run(binomic);
            } catch (IllegalArgumentException e) {
                throw UsageException.refused(e.getMessage());
            }
        }
        return BinomicCli.EXIT_OK;
    }

    /** Runs the command: {@link BinomicCli#EXIT_OK} or {@link BinomicCli#EXIT_FAILED}, or a usage error parsing could not tell. */
    abstract int run(Arguments args) throws UsageException;
}
