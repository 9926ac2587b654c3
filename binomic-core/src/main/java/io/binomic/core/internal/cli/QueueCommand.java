package io.binomic.core.internal.cli;

import io.binomic.core.internal.CoreAccess;
import java.util.List;
import java.util.Optional;

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
        return onBroker(args, List.of(queue), binomic -> {
            requireKnown(args, binomic, queue);
            if (task.isPresent()) {
                requireKnownTask(args, binomic, queue, task.get(), true);
            }
            if (task.isPresent()) {
                // checked above, or meant as typed with --any-task: the library's warning of a likely typo, in Java terms, would
                // say again what the refusal said, or contradict --any-task
                CoreAccess.get().setTaskPausedAsTyped(binomic, queue, task.get(), verb == PAUSE);
            } else if (verb == PAUSE) {
                task.ifPresentOrElse(t -> binomic.queues().pauseTask(queue, t), () -> binomic.queues().pause(queue));
            } else {
                task.ifPresentOrElse(t -> binomic.queues().resumeTask(queue, t), () -> binomic.queues().resume(queue));
            }
            out.println(verb.word() + "d queue " + queue + task.map(t -> " task " + t).orElse(""));
        });
    }
}
