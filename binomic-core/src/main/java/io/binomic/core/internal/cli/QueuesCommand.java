package io.binomic.core.internal.cli;

import io.binomic.api.QueueStats;
import io.binomic.core.Binomic;
import java.io.PrintStream;
import java.util.List;
import java.util.Map;

/** {@code binomic queues}: one line per queue with its broker-side counts. */
final class QueuesCommand implements Command {
    private final PrintStream out;
    private final Map<String, String> env;
    private final BinomicCli.Connector connector;

    QueuesCommand(PrintStream out, Map<String, String> env, BinomicCli.Connector connector) {
        this.out = out;
        this.env = env;
        this.connector = connector;
    }

    @Override
    public String name() {
        return "queues";
    }

    @Override
    public String summary() {
        return "Show each queue: ready, pending, delayed, dead letters and consumers";
    }

    @Override
    public List<Option> options() {
        return List.of(BrokerOptions.BROKER, BrokerOptions.QUEUES);
    }

    @Override
    public String notes() {
        return """
                READY: waiting to be fetched. PENDING: fetched, not yet acknowledged (running, or
                stranded until reclaim). DELAYED: waiting for their due time (DELAY tasks, retry backoff).
                DEAD: in the dead-letter queue ('binomic dlq list'). PAUSED: yes for a paused
                queue ('binomic queue pause'), else the tasks paused one by one, else -.
                """;
    }

    /** "yes", the paused tasks ("task:a,b"), or "-". */
    private static String paused(Binomic binomic, String queue) {
        try {
            if (binomic.queues().isPaused(queue)) {
                return "yes";
            }
            java.util.Set<String> tasks = binomic.queues().pausedTasks(queue);
            return tasks.isEmpty() ? "-" : "task:" + String.join(",", new java.util.TreeSet<>(tasks));
        } catch (UnsupportedOperationException e) {
            return "-";
        }
    }

    @Override
    public int run(Arguments args) throws UsageException {
        String url = BrokerOptions.url(args, env);
        try (Binomic binomic = connector.connect(url, args.list("queues"))) {
            List<String> queues = Queues.resolve(args, binomic);
            Table table = new Table("QUEUE", "READY", "PENDING", "DELAYED", "DEAD", "CONSUMERS", "PAUSED");
            for (String queue : queues) {
                QueueStats s = binomic.queueStats(queue);
                table.row(queue, s.ready(), s.pending(), s.delayed(), s.deadLetters(), s.consumers(), paused(binomic, queue));
            }
            table.print(out);
            return BinomicCli.EXIT_OK;
        }
    }
}
