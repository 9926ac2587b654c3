package io.binomic.core.internal.cli;

import io.binomic.core.internal.CoreAccess;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code binomic queue pause NAME [--task T]} and {@code binomic queue resume NAME [--task T]}: stops
 * (or restarts) every worker starting jobs of a queue, or of one task of it, within half a second
 * ({@link io.binomic.core.Queues#REFRESH_MILLIS}).
 * The state is kept in the broker, so it holds across worker and Redis restarts.
 */
final class QueueCommand extends Command {
    static final Option QUEUE = Option.value("queue", "NAME", "the queue (or give it as the first word after the command)");
    static final Option TASK = Option.value("task", "NAME", "only this task of the queue. Defaults to the whole queue");
    static final Verb PAUSE = new Verb("pause", "Pause a queue, or one task of it: no worker starts its jobs; running ones finish", """
            Example: binomic queue pause mail            (the whole queue)
                     binomic queue pause mail --task send (one task of it)
            Workers on every host see it within 500 ms; jobs already running finish. Messages of a
            paused task that a worker had fetched are parked (no attempt used) until resumed.
            'binomic queues' shows what is paused.
            """);
    static final Verb RESUME = new Verb("resume", "Resume a paused queue, or task: its waiting and parked jobs run again", """
            Example: binomic queue resume mail
            Resuming the queue leaves tasks paused one by one paused: resume them with --task.
            A resume of a queue or task that is not paused changes nothing: it says so, names
            what is paused instead, and exits 1.
            """);

    private final Verb verb;

    QueueCommand(Context cx, Verb verb) {
        super(cx, "queue " + verb.word(), verb.summary(), List.of(BROKER, QUEUE, TASK, ANY_TASK, CREATE), verb.notes());
        this.verb = verb;
    }

    @Override
    List<String> takeOperands(List<String> rest) { return queueAsFirstWord(rest); }

    /** {@code queue pause NAME}, {@code queue limit NAME}: the first word, when it is not an option, is the queue. */
    static List<String> queueAsFirstWord(List<String> rest) { return firstWordAs("queue", rest); }

    @Override
    int run(Arguments args) throws UsageException {
        String queue = args.queueName().orElseThrow(() -> new UsageException("name the queue: binomic queue " + verb.word() + " NAME"));
        Optional<String> task = args.value("task");
        int[] exit = {BinomicCli.EXIT_OK};
        onBroker(args, List.of(queue), binomic -> {
            requireKnown(args, binomic, queue);
            if (task.isPresent()) {
                requireKnownTask(args, binomic, queue, task.get(), true);
            }
            // Read before the write: a resume of what is not paused changes nothing, and says so.
            boolean queuePaused = binomic.queues().isPaused(queue);
            Set<String> pausedTasks = binomic.queues().pausedTasks(queue);
            boolean wasPaused = task.map(pausedTasks::contains).orElse(queuePaused);
            if (task.isPresent()) {
                // checked above, or meant as typed with --any-task: the library's warning of a likely typo, in Java terms, would
                // say again what the refusal said, or contradict --any-task
                CoreAccess.get().setTaskPausedAsTyped(binomic, queue, task.get(), verb == PAUSE);
            } else if (verb == PAUSE) {
                binomic.queues().pause(queue);
            } else {
                // Written even when it reads as not paused: it lifts a pause some partitions of the queue may still hold.
                binomic.queues().resume(queue);
            }
            if (verb == RESUME && !wasPaused) {
                err.println("binomic " + name + ": " + task.map(t -> "task " + t + " of queue " + queue).orElse("queue " + queue)
                        + " was not paused on " + brokerRead(binomic) + "; nothing changed" + stillPaused(queue, task, queuePaused, pausedTasks));
                exit[0] = BinomicCli.EXIT_FAILED;
                return;
            }
            out.println(verb.word() + "d queue " + queue + task.map(t -> " task " + t).orElse("") + " on " + brokerRead(binomic));
            warnIfNeverRead(binomic, queue);
        });
        return exit[0];
    }

    /**
     * What holds the jobs back when a resume changed nothing: the whole queue, for a task resumed, or the tasks paused one
     * by one, for the queue resumed ("Resuming the queue leaves tasks paused one by one paused"); and the command that lifts it.
     */
    private static String stillPaused(String queue, Optional<String> task, boolean queuePaused, Set<String> pausedTasks) {
        if (task.isPresent()) {
            return queuePaused ? ": the whole queue " + queue + " is paused; resume it with 'binomic queue resume " + queue + "'" : "";
        }
        if (pausedTasks.isEmpty()) {
            return "";
        }
        if (pausedTasks.size() == 1) {
            String only = pausedTasks.iterator().next();
            return ": its task " + only + " is paused one by one; resume it with 'binomic queue resume " + queue + " --task " + only + "'";
        }
        return ": its tasks " + String.join(", ", new TreeSet<>(pausedTasks)) + " are paused one by one; resume each with"
                + " 'binomic queue resume " + queue + " --task NAME'";
    }
}
