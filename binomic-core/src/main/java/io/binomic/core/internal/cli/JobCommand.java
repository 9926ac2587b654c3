package io.binomic.core.internal.cli;

import io.binomic.api.BinomicException;
import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.api.JobStatus;
import io.binomic.api.JobTimeoutException;
import io.binomic.api.Priority;
import io.binomic.api.SubmitOptions;
import io.binomic.api.Uniqueness;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.core.Binomic;
import io.binomic.core.internal.CanonicalIds;
import io.binomic.core.internal.FlowSubmits.MergedKey;
import io.binomic.core.internal.MistakenIds;
import io.binomic.core.internal.client.MergedSubmit;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * {@code binomic job show}, {@code binomic job cancel} and {@code binomic job submit}: a job by id
 * from any shell, and a job by task name with a JSON argument (validated by the worker).
 */
final class JobCommand extends Command {
    static final Option ID = Option.value("id", "UUID", "the job id (submit prints it; so do dlq list and the logs)"
            + "; or give it as the first word: job show ID");
    static final Option QUEUE = Option.value("queue", "NAME",
            "the job's queue. Defaults to the first of the application's queues (tasks on the module path) that has a record of the job");
    static final Option SUBMIT_QUEUE = Option.value("queue", "NAME",
            "the task's queue. Defaults to the queue of the task of that name on the module path; required without one");
    static final Option TASK = Option.value("task", "NAME", "the task to run");
    static final Option JSON = Option.value("json", "TEXT", "the argument as JSON, such as '{\"name\":\"Ada\"}'. Defaults to none");
    static final Option PRIORITY = Option.value("priority", "0-9",
            "the job's priority, 0 (lowest) to 9 (highest): within its queue, higher runs first. Defaults to 5");
    static final Option WAIT = Option.value("wait", "DURATION", "wait this long for the job to end and print its result. Defaults to not waiting");
    static final Option DELAY = Option.value("delay", "DURATION", "run the job this long from now (durably scheduled). Defaults to now");
    static final Option UNIQUE = Option.value("unique", "KEY",
            "a unique job: a submit with the same task, queue and key while this one holds it prints this job's id. Defaults to not unique");
    static final Option UNIQUE_SCOPE = Option.value("unique-scope", "SCOPE",
            "how long --unique holds the key: queued (until the job starts), running (until it ends), period (for --unique-ttl). Defaults to running");
    static final Option UNIQUE_TTL = Option.value("unique-ttl", "DURATION", "the most --unique holds the key, in every scope. Defaults to 1h");
    static final Option DEBOUNCE = Option.value("debounce", "KEY",
            "replace the job waiting (with --delay) under this key instead of adding another. Defaults to none");

    static final Verb SHOW = new Verb("show", "Show a job's status, attempts, result or error", """
            Status is kept for tracked tasks (a task with a result type, or declared with
            keepStatusFor), for their retention after they end. Exit code 1 when the job is unknown.
            """);
    static final Verb CANCEL = new Verb("cancel", "Cancel a job: a queued one never runs, a running one is interrupted", """
            Prints CANCELLED (it will not run), CANCEL_REQUESTED (it was running: its worker
            interrupts it), ALREADY_ENDED or NOT_FOUND (both change nothing; exit code 1).
            """);
    static final Verb SUBMIT = new Verb("submit", "Submit a job by task name with a JSON argument", """
            Example: binomic job submit --task greet --queue mail --json '{"name":"Ada"}' --wait 10s
                     binomic job submit --task refresh --queue feeds --json '{"feed":7}' --unique feed-7
                     binomic job submit --task reindex --queue search --json '{"user":"ada"}' --delay 2s --debounce ada
            The worker checks the argument against the task's type: one that does not fit goes
            to the dead-letter queue as DECODE_ERROR, an unknown task as TASK_NOT_FOUND.
            A submit merged into an existing job (--unique key held, --debounce replacing the
            waiting job, or the key the task declares) prints that job's id and says so on
            stderr, naming the key. --wait exits 0 only for a job that succeeded; it prints
            UNTRACKED and exits 1 for a merged job that keeps no status.
            """);

    /** What {@code job submit --wait} prints for a job merged into that keeps no status: the wait's outcome, not a job state. */
    static final String UNTRACKED = "UNTRACKED";

    private final Verb verb;

    JobCommand(Context cx, Verb verb) {
        super(cx, "job " + verb.word(), verb.summary(), verb != SUBMIT ? List.of(BROKER, ID, QUEUE)
                : List.of(BROKER, TASK, SUBMIT_QUEUE, JSON, PRIORITY, DELAY, UNIQUE, UNIQUE_SCOPE, UNIQUE_TTL, DEBOUNCE, WAIT,
                        ANY_TASK, CREATE), verb.notes());
        this.verb = verb;
    }

    /** {@code job show|cancel ID}: the first word, when it is not an option, is the id. */
    @Override
    List<String> takeOperands(List<String> rest) { return verb == SUBMIT ? rest : firstWordAs("id", rest); }

    @Override
    int run(Arguments args) throws UsageException {
        try (Binomic binomic = cx.connect(args, args.value("queue").map(List::of).orElse(List.of()))) {
            if (verb == SUBMIT) {
                return submit(binomic, args);
            }
            JobHandle<String> job = handle(binomic, args);
            return verb == SHOW ? show(binomic, job, where(binomic, args)) : cancel(binomic, job, where(binomic, args));
        } catch (IllegalArgumentException | IllegalStateException e) {
            throw new UsageException(e.getMessage());
        }
    }

    private JobHandle<String> handle(Binomic binomic, Arguments args) throws UsageException {
        String text = args.value("id").orElseThrow(() -> new UsageException("--id is required: the job id, such as 0193a3c4-..."));
        UUID id = CanonicalIds.parse(text).orElseThrow(() -> new UsageException("--id: " + CanonicalIds.refusal(text, "job")));
        Optional<String> queue = args.value("queue");
        if (queue.isPresent()) {
            return binomic.job(queue.get(), id);
        }
        try {
            return binomic.job(id);
        } catch (IllegalStateException e) {
            throw new UsageException("no queue to look for the job in: name it with --queue, or put the application's modules"
                    + " (its TaskProvider) on the module path");
        }
    }

    /**
     * Where {@code job show} and {@code job cancel} looked, for a job they did not find: the queue given (with the queue meant when that one is
     * unknown and close to a known one), or every queue of the tasks on the module path.
     */
    private Supplier<String> where(Binomic binomic, Arguments args) {
        Optional<String> queue = args.value("queue");
        if (queue.isPresent()) {
            return () -> "on queue " + queue.get() + " of " + brokerRead(binomic)
                    + unknownQueue(binomic, queue.get()).map(why -> " (" + why + ")").orElse("");
        }
        return () -> "on any queue of the tasks on the module path (" + String.join(", ", new TreeSet<>(binomic.tasks().queues())) + ")"
                + " of " + brokerRead(binomic);
    }

    /** Why job {@code id} was not found: the id of a batch or a workflow, named with its command ({@code verb}), or the usual reasons. */
    private static String notAJob(Binomic binomic, UUID id, String verb) {
        return MistakenIds.kindOf(binomic, id, MistakenIds.JOB).map(kind -> MistakenIds.sentence(kind, id, verb))
                .orElse("a wrong id or queue, a task that is not tracked, or a status past its retention");
    }

        private int show(Binomic binomic, JobHandle<String> job, Supplier<String> where) {
        JobStatus s = job.status();
        out.println("job      " + job.id());
        // Without a status the job is not known to be on any queue: the handle's queue is only where it looked first.
        if (s.state() != JobState.UNKNOWN) {
            out.println("queue    " + job.queue());
        }
        out.println("state    " + s.state());
        if (s.state() == JobState.UNKNOWN) {
            err.println("no status is kept for job " + job.id() + " " + where.get() + ": " + notAJob(binomic, job.id(), "show"));
            return BinomicCli.EXIT_FAILED;
        }
        if (!s.state().isFinal() && s.state() != JobState.RUNNING) {
            // the queue as paused: a job of a partitioned queue may name its partition
            heldByPause(binomic, QueuePartitions.logical(job.queue()), s.task()).ifPresent(why -> out.println("paused   " + why));
        }
        out.println("task     " + Table.printable(s.task()));
        out.println("attempt  " + s.attempt());
        s.due().ifPresent(d -> out.println("due      " + d));
        s.worker().ifPresent(w -> out.println("worker   " + Table.printable(w)));
        s.startedAt().ifPresent(t -> out.println("started  " + t));
        s.endedAt().ifPresent(t -> out.println("ended    " + t));
        s.duration().ifPresent(d -> out.println("took     " + d.toMillis() + " ms"));
        s.progress().ifPresent(p -> out.println("progress " + p + "%" + s.progressNote().filter(n -> !n.isEmpty()).map(n -> " " + Table.printable(n)).orElse("")));
        if (s.cancelRequested()) {
            out.println("cancel   requested");
        }
        s.deadLetterReason().ifPresent(r -> out.println("reason   " + r));
        s.error().ifPresent(e -> out.println("error    " + Table.printable(e)));
        s.result().ifPresent(r -> out.println("result   " + Table.printable(r)));
        Table table = new Table("ATTEMPT", "WORKER", "STARTED", "MS", "OUTCOME", "ERROR");
        s.attempts().forEach(a -> table.row(a.attempt(), a.worker(), a.startedAt(), Duration.between(a.startedAt(), a.endedAt()).toMillis(),
                a.outcome(), a.error()));
        table.print(out);
        return BinomicCli.EXIT_OK;
    }

    private int cancel(Binomic binomic, JobHandle<String> job, Supplier<String> where) {
        JobHandle.CancelOutcome outcome = job.cancel();
        out.println(outcome + " " + job.id());
        if (outcome == JobHandle.CancelOutcome.NOT_FOUND) {
            err.println("binomic " + name + ": no job " + job.id() + " " + where.get() + ": " + notAJob(binomic, job.id(), "cancel"));
        }
        return outcome == JobHandle.CancelOutcome.CANCELLED || outcome == JobHandle.CancelOutcome.CANCEL_REQUESTED
                ? BinomicCli.EXIT_OK : BinomicCli.EXIT_FAILED;
    }

    /**
     * What pause holds back a job of {@code task} on {@code queue}, and the command that lifts it; empty when none does or the
     * broker cannot say. A paused queue or task is the likeliest reason a job does not start, and its state (QUEUED) does not
     * tell it.
     */
    static Optional<String> heldByPause(Binomic binomic, String queue, String task) {
        boolean queuePaused;
        boolean taskPaused;
        try {
            queuePaused = binomic.queues().isPaused(queue);
            taskPaused = binomic.queues().pausedTasks(queue).contains(task);
        } catch (RuntimeException e) {
            return Optional.empty();
        }
        String resumeQueue = "'binomic queue resume " + queue + "'";
        String resumeTask = "'binomic queue resume " + queue + " --task " + task + "'";
        if (queuePaused && taskPaused) {
            return Optional.of("queue '" + queue + "' and its task '" + task + "' are paused: the job starts once both are resumed ("
                    + resumeQueue + " and " + resumeTask + ")");
        }
        if (queuePaused) {
            return Optional.of("queue '" + queue + "' is paused: the job starts once it is resumed (" + resumeQueue + ")");
        }
        return taskPaused ? Optional.of("task '" + task + "' of queue '" + queue + "' is paused: the job starts once it is resumed ("
                + resumeTask + ")") : Optional.empty();
    }

    /** Whether no worker reads {@code queue}; false when the broker cannot say (a warning is no reason to fail a submit). */
    private static boolean unread(Binomic binomic, String queue) {
        try {
            return binomic.queueStats(queue).consumers() == 0;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private int submit(Binomic binomic, Arguments args) throws UsageException {
        String task = args.value("task").orElseThrow(() -> new UsageException("--task is required: the task's name"));
        // A task on the module path gives its queue; another queue would submit past its declaration (uniqueness, ...).
        Optional<String> declaredQueue = args.has(ANY_TASK.name()) ? Optional.empty()
                : binomic.tasks().find(task).map(io.binomic.api.Task::queue);
        if (declaredQueue.isEmpty() && args.value("queue").isEmpty() && !args.has(ANY_TASK.name())) {
            // A typo of a task on the module path: the name meant, not a --queue that would send the typo on.
            Optional<io.binomic.api.Task<?, ?>> meant = ClosestName.to(task, binomic.tasks().all().stream().map(io.binomic.api.Task::name)
                    .toList()).flatMap(binomic.tasks()::find);
            if (meant.isPresent()) {
                throw new UsageException("task '" + task + "' is not known: no task on the module path has that name; did you mean '"
                        + meant.get().name() + "' (on queue " + meant.get().queue() + ")? Else give --queue and add --any-task to"
                        + " use the name as typed");
            }
        }
        String queue = args.value("queue").or(() -> declaredQueue).orElseThrow(() -> new UsageException(
                "--queue is required: the task's queue (no task of that name is on this CLI's module path to look it up)"));
        if (declaredQueue.isPresent() && !declaredQueue.get().equals(queue)) {
            throw new UsageException("task '" + task + "' is declared on queue '" + declaredQueue.get() + "' (a task on this CLI's"
                    + " module path), not '" + queue + "': leave --queue out to submit it as declared, or add --any-task to send"
                    + " the name to '" + queue + "' as typed");
        }
        Optional<Duration> wait = args.duration("wait");
        int priority = args.intValue("priority", Priority.DEFAULT, Priority.MIN);
        if (priority > Priority.MAX) {
            throw new UsageException("--priority must be from 0 (lowest) to 9 (highest), was " + priority + "; leave it out for 5");
        }
        SubmitOptions.Builder options = SubmitOptions.builder().priority(priority);
        Optional<Duration> delay = args.duration("delay");
        if (delay.isPresent()) {
            Arguments.applied("delay", () -> options.delay(delay.get()));
        }
        Optional<String> unique = args.value("unique");
        if (unique.isEmpty() && (args.has("unique-scope") || args.has("unique-ttl"))) {
            throw new UsageException("--unique-scope and --unique-ttl go with --unique KEY");
        }
        if (unique.isPresent()) {
            Duration ttl = args.duration("unique-ttl").orElse(Duration.ofHours(1));
            String scope = args.value("unique-scope").orElse("running");
            Uniqueness uniqueness = Arguments.applied("unique-ttl", () -> switch (scope) {
                case "queued" -> Uniqueness.whileQueued(ttl);
                case "running" -> Uniqueness.whileQueuedOrRunning(ttl);
                case "period" -> Uniqueness.forPeriod(ttl);
                default -> null;
            });
            if (uniqueness == null) {
                throw new UsageException("--unique-scope must be queued, running or period, was '" + scope + "'");
            }
            options.unique(uniqueness, unique.get());
        }
        args.value("debounce").ifPresent(options::debounce);
        requireKnown(args, binomic, queue);
        // Not strict: the workers may run tasks this CLI's module path does not have.
        requireKnownTask(args, binomic, queue, task, false);
        boolean unchecked = binomic.tasks().all().isEmpty() && !args.has(ANY_TASK.name())
                && !binomic.queues().pausedTasks(queue).contains(task);
        JobHandle<String> job = binomic.submitJson(queue, task, args.value("json").orElse(null), options.build());
        out.println(job.id());
        Optional<MergedKey> mergedBy = MergedSubmit.of(job);
        boolean merged = mergedBy.isPresent();
        // after the submit: a submit that failed says only why
        if (unchecked) {
            err.println("binomic " + name + ": warning: task name '" + task + "' not checked: this CLI has no task on its module path"
                    + " (put the application's task module beside it, in runtime/app/ or on --module-path, to check names); a worker"
                    + " with no handler of that name dead-letters the job as TASK_NOT_FOUND; --any-task means the name as typed, without"
                    + " this warning");
        }
        if (merged) {
            err.println("binomic " + name + ": merged into job " + job.id() + ", " + mergedHow(mergedBy.get(), task, args)
                    + ": no new job was queued");
        }
        // As a batch's submit warns: a job on a queue nobody reads waits silently, a mistyped or new queue looks like a stuck worker.
        // A merged submit queued nothing, but the job it stands for waits on that queue all the same.
        if (unread(binomic, queue)) {
            err.println("binomic " + name + ": warning: no worker reads queue '" + queue + "' (it has no consumer): the job waits there until a"
                    + " worker of that queue starts");
        }
        heldByPause(binomic, queue, task).ifPresent(why -> err.println("binomic " + name + ": warning: " + why));
        if (wait.isEmpty()) {
            return BinomicCli.EXIT_OK;
        }
        if (merged && job.status().state() == JobState.UNKNOWN) {
            // The earlier submit chose whether its job keeps a status; without one nothing can tell when it ends.
            out.println(UNTRACKED);
            err.println("binomic " + name + ": cannot wait for job " + job.id() + ": it keeps no status (the submit it was"
                    + " queued by did not track it, or its status is past its retention), so its end and result cannot be read;"
                    + " it runs as queued. Exit code 1: nothing was waited for");
            return BinomicCli.EXIT_FAILED;
        }
        try {
            String result = job.await(wait.get());
            out.println(job.status().state() + (result == null ? "" : " " + result));
            return BinomicCli.EXIT_OK;
        } catch (JobTimeoutException e) {
            err.println(e.getMessage() + (unread(binomic, queue) ? "; queue '" + queue + "' still has no consumer: no worker reads it,"
                    + " so the job runs only once a worker of that queue starts" : "")
                    + heldByPause(binomic, queue, task).map(why -> "; " + why).orElse(""));
            return BinomicCli.EXIT_FAILED;
        } catch (BinomicException e) {
            out.println(job.status().state());
            err.println(e.getMessage());
            return BinomicCli.EXIT_FAILED;
        }
    }

    /**
     * Which earlier job a merged submit stands for: the key it met, and where that key came from when the
     * submit did not give it (the task's declaration on the module path derives it from the argument).
     */
    private static String mergedHow(MergedKey merge, String task, Arguments args) {
        boolean given = args.has(merge.debounce() ? "debounce" : "unique");
        String key = "'" + merge.key() + "'" + (given ? "" : ", the key task '" + task + "' declares for this argument");
        if (merge.debounce()) {
            return "which was waiting under debounce key " + key + (given ? "" : ",") + " and now takes this submit's argument and due time";
        }
        return "which holds unique key " + key + " (a duplicate of a unique job is dropped)";
    }
}
