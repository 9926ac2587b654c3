package io.binomic.it;

import io.binomic.core.Binomic;
import io.binomic.core.Worker;
import io.binomic.core.WorkerHealth;
import java.time.Duration;

/**
 * Main class of a worker JVM that reaches Redis at one port (a {@link FaultProxy}) and records
 * its runs in the {@link Ledger} at another (Redis itself, so that the ledger never goes through
 * the faults). Prints {@code WORKER READY} once it consumes, then a {@code HEALTH <state>
 * <epoch millis> <problem>} line at every change of {@link Worker#health()}, looked at every 20 ms.
 * Arguments: redis host, ledger port, broker port, queue, lease ms.
 */
public final class ProxiedWorkerProcess {
    private ProxiedWorkerProcess() { }

    public static void main(String[] args) throws InterruptedException {
        String host = args[0];
        int ledgerPort = Integer.parseInt(args[1]);
        int brokerPort = Integer.parseInt(args[2]);
        String queue = args[3];
        Duration lease = Duration.ofMillis(Long.parseLong(args[4]));
        Ledger ledger = new Ledger(host, ledgerPort, queue);
        Binomic binomic = Binomic.builder().config(TestApp.config("redis://" + host + ":" + brokerPort, queue, lease))
                .handle(TestApp.job(queue, Duration.ofMillis(100)), TestApp.handler(ledger)).build().start();
        Worker worker = binomic.startWorker();
        System.out.println("WORKER READY pid=" + ProcessHandle.current().pid());
        System.out.flush();
        WorkerHealth.State last = null;
        while (true) {
            WorkerHealth health = worker.health();
            if (health.state() != last) {
                last = health.state();
                System.out.println("HEALTH " + last + " " + System.currentTimeMillis() + " " + health);
                System.out.flush();
            }
            Thread.sleep(20);
        }
    }
}
