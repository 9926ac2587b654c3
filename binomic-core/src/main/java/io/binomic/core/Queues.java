package io.binomic.core;

import io.binomic.api.QueueLimits;
import io.binomic.api.QueueStats;
import io.binomic.api.Task;
import io.binomic.api.TaskRegistry;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.PauseState;
import io.binomic.api.spi.Pausing;
import io.binomic.api.spi.QueuePartitions;
import io.binomic.core.internal.Capabilities;
import io.binomic.core.internal.PartitionRouter;
import io.binomic.core.internal.QueueTraces;
import io.binomic.core.internal.cli.ClosestName;
import io.binomic.core.internal.worker.LocalPauses;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Pause, resume and drain queues, or single tasks of a queue, across every worker and host. The
 * paused state lives in the broker (on Redis, a set under the queue's hash tag, persisted like the
 * rest), so it survives worker and Redis restarts. When {@link #pause} returns, no worker of this
 * JVM (of any instance in it) starts a job of the queue: each has read the paused state again.
 * A worker in another process reads it every {@value #REFRESH_MILLIS} ms, not once per fetch, and
 * starts nothing with a view older than that: it starts no job of the queue later than
 * {@value #REFRESH_MILLIS} ms after {@code pause} returned, while it can read the broker. Jobs
 * already running finish. A message of a paused queue or task that a worker had fetched is parked
 * (no attempt used, nothing failed) and comes back when it is resumed.
 *
 * <pre>{@code
 * binomic.queues().pause("mail");        // stop starting jobs of queue "mail"
 * binomic.queues().isPaused("mail");     // true, in every process
 * binomic.queues().resume("mail");       // start again
 * }</pre>
 */
public final class Queues {
    private static final System.Logger LOG = System.getLogger(Queues.class.getName());
    /** How often a worker reads the paused state, at most. */
    public static final long REFRESH_MILLIS = 500;
    /** How often a worker reads the limits of its queues ({@link #setLimits}), at most. */
    public static final long LIMITS_REFRESH_MILLIS = 1000;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.:-]{1,200}");

    private final Broker broker;
    private final PartitionRouter router;
    /** The queues this instance's tasks and {@code worker.queues} name, as the CLI's check of a queue name counts them. */
    private final Supplier<List<String>> named;
    /** This instance's tasks, which {@link #pauseTask} checks a task name against. */
    private final Supplier<TaskRegistry> tasks;

    Queues(Broker broker, PartitionRouter router, Supplier<List<String>> named, Supplier<TaskRegistry> tasks) {
        this.broker = broker;
        this.router = router;
        this.named = named;
        this.tasks = tasks;
    }

    /**
     * Pauses {@code queue}: when it returns, no worker of this JVM starts a job of it; a worker in
     * another process starts none later than {@value #REFRESH_MILLIS} ms after. Running jobs finish.
     * Idempotent.
     */
    public void pause(String queue) {
        LocalPauses.written(forEachPartition(queue, p -> pausing().pause(p, Optional.empty())), Optional.empty());
    }

    /** Runs {@code action} on every partition of {@code queue} (the queue itself when it is not partitioned); returns them. */
    private List<String> forEachPartition(String queue, Consumer<String> action) {
        checkQueue(queue);
        router.forget(queue);
        List<String> partitions = router.of(queue).all(queue);
        partitions.forEach(action);
        return partitions;
    }

    /** Resumes {@code queue} (tasks paused one by one with {@link #pauseTask} stay paused); its parked messages run again. Idempotent. */
    public void resume(String queue) { forEachPartition(queue, p -> pausing().resume(p, Optional.empty())); }

    /** True when {@code queue} itself is paused (see {@link #pausedTasks} for tasks paused one by one). */
    public boolean isPaused(String queue) { return state(queue).queuePaused(); }

    /**
     * Pauses only {@code task} of {@code queue}: its messages are parked, the queue's other tasks run
     * on. It holds when it returns, as {@link #pause} does. Idempotent.
     *
     * <p>A task may be paused before anything runs it (a task of another application), so any name is
     * paused as given. When the name is not one of this instance's tasks of {@code queue} nor a task paused
     * there, and it is close to one ({@code "wrok"} for {@code "work"}) or is this instance's task of another
     * queue, most likely a typo, a warning names the task or queue meant. Once paused, the name is known, so
     * a later call does not warn again.
     */
    public void pauseTask(String queue, String task) { pauseTask(queue, task, true); }

    /** {@link #pauseTask}; without the warning of a likely typo when {@code checked} is false (the CLI's {@code --any-task}). */
    void pauseTask(String queue, String task, boolean checked) {
        checkTask(task);
        Set<String> paused = pausedTasks(queue);
        Optional<MeantTask> meant = !checked || paused.contains(task) ? Optional.empty() : likelyMeantTask(queue, task, paused);
        LocalPauses.written(forEachPartition(queue, p -> pausing().pause(p, Optional.of(task))), Optional.of(task));
        meant.ifPresent(m -> LOG.log(System.Logger.Level.WARNING, "paused task '" + task + "' of queue '" + queue + "', which is not"
                + " known there: no task of this instance on that queue has the name and it was not paused there; " + m.question()
                + " If '" + task + "' is meant, nothing more is needed (its pause makes it known); else resumeTask(\"" + queue + "\", \""
                + task + "\") and pauseTask(\"" + m.queue() + "\", \"" + m.task() + "\")"));
    }

    /**
     * Resumes {@code task} of {@code queue}; its parked messages run again unless the queue is paused. Idempotent. A name
     * not paused there changes nothing; when it is most likely a typo (as {@link #pauseTask} tells one), a warning says so
     * and names the task meant.
     */
    public void resumeTask(String queue, String task) { resumeTask(queue, task, true); }

    /** {@link #resumeTask}; without the warning of a likely typo when {@code checked} is false (the CLI's {@code --any-task}). */
    void resumeTask(String queue, String task, boolean checked) {
        checkTask(task);
        Set<String> paused = pausedTasks(queue);
        forEachPartition(queue, p -> pausing().resume(p, Optional.of(task)));
        if (checked && !paused.contains(task)) {
            likelyMeantTask(queue, task, paused).ifPresent(m -> LOG.log(System.Logger.Level.WARNING, "resumed task '" + task
                    + "' of queue '" + queue + "', which is not paused there: nothing changed (paused: " + new TreeSet<>(paused)
                    + "); " + m.question()));
        }
    }

    /** The task a mistyped task name most likely meant, and its queue. */
    private record MeantTask(String task, String queue) {
        String question() { return "did you mean task '" + task + "' of queue '" + queue + "'?"; }
    }

    /**
     * The task a name that {@code queue} does not know most likely meant: this instance's task of that name on another
     * queue, else the closest of the queue's known tasks; empty for a known name or one far from any. Known: this
     * instance's tasks of the queue and the tasks paused there ({@code paused}), all a process can tell without scanning
     * the queue's jobs (the workers' activity records count per queue, not per task).
     */
    private Optional<MeantTask> likelyMeantTask(String queue, String task, Set<String> paused) {
        Optional<Task<?, ?>> elsewhere = tasks.get().find(task).filter(t -> !t.queue().equals(queue));
        if (elsewhere.isPresent()) {
            return Optional.of(new MeantTask(task, elsewhere.get().queue()));
        }
        List<String> known = Stream.concat(tasks.get().all().stream().filter(t -> t.queue().equals(queue)).map(Task::name),
                paused.stream()).distinct().toList();
        return ClosestName.to(task, known).map(closest -> new MeantTask(closest, queue));
    }

    /** True when {@code task} of {@code queue} is paused one by one. */
    public boolean isTaskPaused(String queue, String task) { return state(queue).pausedTasks().contains(checkTask(task)); }

    /** The tasks of {@code queue} paused one by one. */
    public Set<String> pausedTasks(String queue) { return state(queue).pausedTasks(); }

    /**
     * Pauses {@code queue} and waits until none of its jobs is running (its pending count is zero),
     * at most {@code timeout}: what to do before a deploy that changes its tasks. The queue stays
     * paused (its waiting messages stay, untouched): {@link #resume} it after. Returns true when it
     * drained in time, false when jobs were still running (their workers go on with them).
     *
     * @throws InterruptedException when interrupted while waiting (the queue stays paused)
     */
    public boolean drain(String queue, Duration timeout) throws InterruptedException {
        Objects.requireNonNull(timeout, "timeout must not be null");
        if (timeout.isNegative()) {
            // checked before the pause: a refused call must leave the queue as it was
            throw new IllegalArgumentException("drain timeout must be zero or positive, was " + timeout
                    + "; give how long to wait for running jobs, e.g. Duration.ofMinutes(2)");
        }
        pause(queue);
        long deadline = System.nanoTime() + timeout.toNanos();
        // Workers see the pause within REFRESH_MILLIS: one that fetched just before may start a job that late.
        Thread.sleep(Math.min(timeout.toMillis(), REFRESH_MILLIS * 2));
        while (true) {
            QueueStats stats = stats(queue);
            if (stats.pending() == 0) {
                return true;
            }
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            Thread.sleep(100);
        }
    }

    /**
     * Sets the limits of {@code queue} (replacing any it had): at most so many starts per period and
     * so many running at once, for all its tasks together, across every worker and host. Workers
     * apply them within about a second ({@value #LIMITS_REFRESH_MILLIS} ms); a job also passes its
     * task's own limits. {@link QueueLimits#NONE} removes them. Durable, like a pause.
     *
     * <p>A queue may be limited before anything runs on it, so a name no task of this instance or
     * {@code worker.queues} names, and of which the broker holds nothing, is accepted; when such a name
     * is close to a queue this instance knows ({@code "ccqq"} for {@code "ccq"}), most likely a typo, the
     * limits are set as given and a warning names the queue meant. Once set, the limits make the queue
     * known, so a later call on it does not warn again.
     *
     * @throws UnsupportedOperationException when the broker has no flow control
     */
    public void setLimits(String queue, QueueLimits limits) {
        Objects.requireNonNull(limits, "limits must not be null (QueueLimits.NONE removes them)");
        checkQueue(queue);
        if (!limits.isEmpty() && freshPartitions(queue).partitioned()) {
            throw new IllegalArgumentException("queue '" + queue + "' is partitioned: its limits would be counted per partition (one"
                    + " Redis slot each) and would not hold; set limits on a queue of one partition (binomic queue partitions "
                    + queue + " 1, then again once its other partitions are empty)");
        }
        FlowLimits flowLimits = Capabilities.require(broker, FlowLimits.class, "queues cannot have rate or concurrency limits");
        Optional<String> meant = limits.isEmpty() ? Optional.empty() : likelyMeant(queue);
        flowLimits.setQueueLimits(queue, limits);
        meant.ifPresent(known -> LOG.log(System.Logger.Level.WARNING, "set limits on queue ''{0}'', which is not known: no task of"
                + " this instance or worker.queues names it, and the broker held no job, consumer group, dead letter, pause, limit or"
                + " recent activity of it; did you mean ''{1}''? If ''{0}'' is meant, nothing more is needed (its limits make it"
                + " known); else remove them with setLimits(\"{0}\", QueueLimits.NONE) and set them on ''{1}''", queue, known));
    }

    /** The known queue a typed {@code queue} most likely meant, when the name is unknown and close to a known one. */
    private Optional<String> likelyMeant(String queue) {
        List<String> known = named.get();
        if (known.contains(queue)) {
            return Optional.empty();
        }
        Optional<String> closest = QueueTraces.likelyMeant(broker, queue, known);
        return closest.isPresent() && !QueueTraces.inBroker(broker, this, queue) ? closest : Optional.empty();
    }

    /**
     * Splits {@code queue} into {@code count} partitions (1 to {@value QueuePartitions#MAX}), durably:
     * producers spread its jobs over them and workers read them all, so that on Redis Cluster one
     * busy queue runs on several masters. Every producer and worker applies the change within about
     * a second ({@value PartitionRouter#REFRESH_MILLIS} ms), while they run.
     *
     * <p>Raising the count takes effect at once. Lowering it stops producers writing to the partitions
     * beyond {@code count}, while workers keep reading them until they are empty: nothing is
     * stranded. Calling it again with the same {@code count} once those partitions hold nothing (no
     * message ready, running, delayed or dead-lettered) forgets them, and the queue is then exactly
     * as if it had always had {@code count} partitions ({@code 1}: unpartitioned). Returns the
     * partitions now set.
     *
     * @throws IllegalArgumentException when the count is out of range, or the queue has limits
     *         ({@link #setLimits}): limits hold on a queue of one partition only
     * @throws UnsupportedOperationException when the broker cannot partition queues
     */
    public QueuePartitions setPartitions(String queue, int count) {
        checkQueue(queue);
        QueuePartitions.requireCount(count);
        QueuePartitions was = freshPartitions(queue);
        if (count > 1 && !limits(queue).isEmpty()) {
            throw new IllegalArgumentException("queue '" + queue + "' has limits (" + limits(queue) + "): limits hold on a queue of one"
                    + " partition only; remove them first (binomic queue limit " + queue + " --none) or keep the queue whole");
        }
        int highest = Math.max(was.highest(), count);
        if (count == was.count() && highest > count && emptyFrom(queue, count, highest)) {
            highest = count;
        }
        QueuePartitions now = new QueuePartitions(count, highest);
        Capabilities.require(broker, Partitioning.class, "queues cannot be partitioned").setPartitions(queue, now);
        if (now.highest() > was.highest()) {
            // new partitions of a paused queue are paused too
            PauseState paused = pauseState(queue);
            for (int i = was.highest(); i < now.highest(); i++) {
                String partition = QueuePartitions.physical(queue, i);
                if (paused.queuePaused()) {
                    pausing().pause(partition, Optional.empty());
                }
                paused.pausedTasks().forEach(t -> pausing().pause(partition, Optional.of(t)));
            }
        }
        router.forget(queue);
        return now;
    }

    /** The partitions of {@code queue}; {@link QueuePartitions#ONE} when it is not partitioned. */
    public QueuePartitions partitions(String queue) { return freshPartitions(checkQueue(queue)); }

    private QueuePartitions freshPartitions(String queue) {
        return broker.capability(Partitioning.class).map(p -> p.partitions(List.of(queue)).getOrDefault(queue, QueuePartitions.ONE))
                .orElse(QueuePartitions.ONE);
    }

    private boolean emptyFrom(String queue, int from, int highest) {
        for (int i = from; i < highest; i++) {
            QueueStats s = broker.stats(QueuePartitions.physical(queue, i));
            if (s.ready() + s.pending() + s.delayed() + s.deadLetters() > 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Broker-side counts of {@code queue}; for a partitioned queue, the sums over its partitions
     * (consumers: the most any partition has, as every worker of the queue reads all of them).
     */
    public QueueStats stats(String queue) {
        QueuePartitions p = router.of(checkQueue(queue));
        if (!p.partitioned()) {
            return broker.stats(queue);
        }
        long ready = 0;
        long pending = 0;
        long delayed = 0;
        long dead = 0;
        int consumers = 0;
        for (String partition : p.all(queue)) {
            QueueStats s = broker.stats(partition);
            ready += s.ready();
            pending += s.pending();
            delayed += s.delayed();
            dead += s.deadLetters();
            consumers = Math.max(consumers, s.consumers());
        }
        return new QueueStats(queue, ready, pending, delayed, dead, consumers);
    }

    /**
     * How many jobs of {@code queue} are parked: held back by a pause of the queue or of their task
     * ({@link #pauseTask}) until it is resumed, and counted among {@link QueueStats#delayed()} meanwhile, although
     * no due time will bring them back. For a partitioned queue, the sum over its partitions; none on a broker
     * that cannot pause.
     */
    public long parked(String queue) {
        Optional<Pausing> pausing = broker.capability(Pausing.class);
        if (pausing.isEmpty()) {
            return 0;
        }
        long parked = 0;
        for (String partition : router.of(checkQueue(queue)).all(queue)) {
            parked += pausing.get().parked(partition);
        }
        return parked;
    }

    /** The limits of {@code queue}; {@link QueueLimits#NONE} when it has none. */
    public QueueLimits limits(String queue) {
        checkQueue(queue);
        return broker.capability(FlowLimits.class).map(f -> f.queueLimits(List.of(queue)).getOrDefault(queue, QueueLimits.NONE))
                .orElse(QueueLimits.NONE);
    }

    private PauseState state(String queue) { return pauseState(checkQueue(queue)); }

    private static String checkQueue(String queue) { return checkName("queue", queue); }

    private static String checkTask(String task) { return checkName("task", task); }

    private static String checkName(String what, String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException(what + " must be 1-200 characters of letters, digits, '_', '.', ':' or '-', was '" + name + "'");
        }
        return name;
    }

    private Pausing pausing() { return Capabilities.require(broker, Pausing.class, "queues cannot be paused"); }

    /** What is paused on {@code queue}: nothing, on a broker that cannot pause. */
    private PauseState pauseState(String queue) {
        return broker.capability(Pausing.class).map(p -> p.pauseStates(List.of(queue)).getOrDefault(queue, PauseState.NONE))
                .orElse(PauseState.NONE);
    }
}
