package io.binomic.core.internal.cli;

import io.binomic.api.BrokerException;
import io.binomic.api.QueueLimits;
import io.binomic.api.QueueStats;
import io.binomic.core.Binomic;
import io.binomic.core.internal.RepeatedErrorLog;
import io.binomic.core.internal.process.Settings;
import io.binomic.core.internal.web.QueueCounts;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** {@code binomic queues}: one line per queue with its broker-side counts. */
final class QueuesCommand extends Command {
    QueuesCommand(Context cx) {
        super(cx, "queues", "Show each queue: ready, pending, delayed, parked, dead letters, consumers, pause and limits",
                List.of(BROKER, QUEUES), """
                READY: waiting to be fetched. PENDING: fetched, not yet acknowledged (running, or
                stranded until reclaim). DELAYED: waiting for their due time (DELAY tasks, retry backoff)
                or for a rate limit or a concurrency slot. PARKED: held back by a pause of the queue or
                of their task until it is resumed (no due time brings them back; not in DELAYED). DEAD:
                in the dead-letter queue ('binomic dlq list'). PAUSED: yes for a paused queue ('binomic
                queue pause'), else the tasks paused one by one, else -. LIMITS: the queue's own rate
                and concurrency limits ('binomic queue limit'), else - (limits declared by tasks in code
                are not shown).
                """);
    }

    /** "yes", the paused tasks ("task:a,b"), or "-". */
    private static String paused(Binomic binomic, String queue) {
        // a broker that cannot pause reports nothing paused
        if (binomic.queues().isPaused(queue)) {
            return "yes";
        }
        Set<String> tasks = binomic.queues().pausedTasks(queue);
        return tasks.isEmpty() ? "-" : "task:" + String.join(",", new TreeSet<>(tasks));
    }

    /** The queue's own limits as {@code binomic queue limit} shows them, or "-". */
    private static String limits(Binomic binomic, String queue) {
        QueueLimits limits = binomic.queues().limits(queue);
        return limits.isEmpty() ? "-" : limits.toString();
    }

    @Override
    int run(Arguments args) throws UsageException {
        try (Binomic binomic = cx.connect(args, args.list("queues"))) {
            List<String> queues = queues(args, binomic);
            Table table = new Table("QUEUE", "READY", "PENDING", "DELAYED", "PARKED", "DEAD", "CONSUMERS", "PAUSED", "LIMITS");
            // One queue whose keys are broken (a key of another type) must not hide the others' figures.
            Map<String, BrokerException> failed = new LinkedHashMap<>();
            boolean nothing = true;
            for (String queue : queues) {
                QueueStats s;
                QueueCounts counts;
                try {
                    counts = QueueCounts.read(binomic, queue);
                    s = counts.stats();
                } catch (BrokerException e) {
                    failed.put(queue, e);
                    table.row(queue, "?", "?", "?", "?", "?", "?", "?", "?");
                    continue;
                }
                table.row(queue, s.ready(), s.pending(), counts.delayed(), counts.parked(), s.deadLetters(), s.consumers(),
                        paused(binomic, queue), limits(binomic, queue));
                if (s.ready() + s.pending() + s.delayed() + s.deadLetters() + s.consumers() == 0) {
                    warnIfUnknown(binomic, queue);
                } else {
                    nothing = false;
                }
            }
            if (!failed.isEmpty() && failed.size() == queues.size()) {
                throw failed.values().iterator().next(); // Redis down, most likely: its own message says so
            }
            table.print(out);
            if (nothing && failed.isEmpty()) {
                err.println("binomic " + name + ": nothing found on " + brokerRead(binomic) + ": no queue shown holds a job, dead letter"
                        + " or consumer; if some were expected, check the broker (--broker, " + Settings.BROKER_URL_ENV + " or broker.url)");
            }
            if (!failed.isEmpty()) {
                StringBuilder why = new StringBuilder("the figures of " + failed.size() + " queue(s) could not be read (shown as ?):");
                failed.forEach((queue, e) -> why.append(" '").append(queue).append("': ")
                        .append(RepeatedErrorLog.brief(e)));
                String example = failed.keySet().iterator().next();
                throw new BrokerException(why + ". On WRONGTYPE a key of the queue holds another type: check its"
                        + " keys (for '" + example + "': binomic:{" + example + "}:stream and the keys beginning with it, under"
                        + " broker.keyPrefix if set) with TYPE, then delete or rename the wrong one");
            }
            return BinomicCli.EXIT_OK;
        }
    }
}
