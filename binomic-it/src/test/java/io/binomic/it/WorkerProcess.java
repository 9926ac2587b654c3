package io.binomic.it;

import io.binomic.core.Binomic;
import java.time.Duration;

/**
 * Main class of a worker JVM spawned by the fault tests: runs the {@link TestApp} worker on one
 * queue until it is killed. Arguments: redis host, port (of the ledger, and of the broker unless given),
 * queue, lease ms, backoff ms, and optionally the broker's URL (a Redis Cluster's).
 */
public final class WorkerProcess {
    private WorkerProcess() { }

    public static void main(String[] args) throws InterruptedException {
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        String queue = args[2];
        Duration lease = Duration.ofMillis(Long.parseLong(args[3]));
        Duration backoff = Duration.ofMillis(Long.parseLong(args[4]));
        Ledger ledger = new Ledger(host, port, queue);
        String brokerUrl = args.length > 5 ? args[5] : "redis://" + host + ":" + port;
        Binomic binomic = Binomic.builder().config(TestApp.config(brokerUrl, queue, lease))
                .handle(TestApp.job(queue, backoff), TestApp.handler(ledger)).build().start();
        binomic.startWorker();
        System.out.println("WORKER READY pid=" + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
