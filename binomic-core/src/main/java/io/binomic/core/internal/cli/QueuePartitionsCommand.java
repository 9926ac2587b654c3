package io.binomic.core.internal.cli;

import io.binomic.api.spi.QueuePartitions;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code binomic queue partitions NAME [COUNT]}: splits a queue into COUNT partitions (or, without
 * COUNT, shows them), kept in the broker; every producer and worker applies the change within about
 * a second, while they run.
 */
final class QueuePartitionsCommand extends Command {
    static final Option COUNT = Option.value("count", "COUNT",
            "the partitions producers write to, 1 to " + QueuePartitions.MAX + " (also the second word). Defaults to showing them");

    QueuePartitionsCommand(Context cx) {
        super(cx, "queue partitions", "Split a queue into partitions spread over the Redis Cluster's masters, or show them",
                List.of(BROKER, QueueCommand.QUEUE, COUNT, CREATE), """
                Example: binomic queue partitions mail 3     (producers spread mail over 3 partitions)
                         binomic queue partitions mail       (shows them)
                Lowering the count stops producers writing to the highest partitions; workers read
                them until they are empty. Run the same command again once they are empty to forget
                them. A queue with limits (binomic queue limit) cannot be partitioned.
                """);
    }

    /** {@code NAME COUNT}: the first word is the queue, a second word not an option is the count. */
    @Override
    List<String> takeOperands(List<String> rest) {
        List<String> rewritten = new ArrayList<>(QueueCommand.queueAsFirstWord(rest));
        countAsWord = rewritten.size() >= 3 && rewritten.getFirst().equals("--queue") && !rewritten.get(2).startsWith("-");
        if (countAsWord) {
            rewritten.add(2, "--count");
        }
        return rewritten;
    }

    /** Whether the count was the word after the queue, not {@code --count}: a message then names it as typed. */
    private boolean countAsWord;

    private String count() { return countAsWord ? "the count (the word after the queue)" : "--count"; }

    @Override
    int run(Arguments args) throws UsageException {
        String queue = args.queueName().orElseThrow(() -> new UsageException("name the queue: binomic queue partitions NAME 3"));
        Integer count;
        try {
            count = args.intValue("count", 1).orElse(null);
        } catch (UsageException e) {
            throw new UsageException(e.getMessage().replace("--count", count()));
        }
        if (count != null && count > QueuePartitions.MAX) {
            throw new UsageException(count() + " must be at most " + QueuePartitions.MAX + ", was " + count
                    + "; give about one partition per Redis master");
        }
        return onBroker(args, List.of(queue), binomic -> {
            if (count != null) {
                requireKnown(args, binomic, queue);
            }
            QueuePartitions p = count == null ? binomic.queues().partitions(queue) : binomic.queues().setPartitions(queue, count);
            String draining = "";
            String again = "run 'binomic queue partitions " + queue + " " + p.count() + "' again once";
            String left = " no ready, pending or delayed job and no dead letter (purge those with binomic dlq purge; a replay puts"
                    + " them back on the same partition)";
            if (p.highest() - p.count() == 1) {
                draining = " (workers still drain partition " + p.count() + ": " + again + " it holds" + left + ")";
            } else if (p.highest() > p.count()) {
                draining = " (workers still drain partitions " + p.count() + " to " + (p.highest() - 1) + ": " + again + " they hold" + left + ")";
            }
            out.println("partitions of queue " + queue + ": " + p.count() + draining);
        });
    }
}
