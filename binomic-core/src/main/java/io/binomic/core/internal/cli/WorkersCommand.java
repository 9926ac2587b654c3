package io.binomic.core.internal.cli;

import io.binomic.core.WorkerCounters;
import io.binomic.core.internal.process.MasterConfig;
import io.binomic.core.internal.process.SlotSnapshot;
import io.binomic.core.internal.process.Supervision;
import io.binomic.core.internal.process.WorkerSlots;
import io.binomic.core.internal.process.WorkerState;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** {@code binomic workers}: the live state of a master's workers, read from its segment file. */
final class WorkersCommand extends Command {
    WorkersCommand(Context cx) {
        super(cx, "workers", "Show the workers of a master on this machine: pid, state, health, heartbeat age and counters",
                List.of(Option.value("state-dir", "DIR", "the master's state directory. Defaults to master.stateDir of the"
                        + " settings, else " + MasterConfig.defaultStateDirectory())), """
                Reads the master's shared memory segment; needs no broker. HEALTH is the worker's own
                report (consuming, or NOT CONSUMING with its reason) or what the master does about it
                (dead, restarting in N s; hung, stopping). A heartbeat older than the master's timeout
                is marked LATE: the master is about to replace that worker. SUCCEEDED counts the successes
                written to the broker; HELD, the outcomes of every kind the worker has not written yet (it
                holds them while the broker is unreachable, and a worker that dies holding them leaves
                their jobs to run again). STALE counts outcomes the broker refused because another worker
                had reclaimed the message. A problem longer than a slot holds ends in "...".
                """);
    }

    @Override
    Optional<String> whyNot(String name) {
        String noBroker = "this command reads the shared memory of a master on this machine and needs no broker; leave --broker out,"
                + " and give --state-dir for a master of another state directory";
        if (name.equals(BROKER.name())) {
            return Optional.of("--broker is not an option here: " + noBroker);
        }
        // A mistyped --broker has no declared option to be close to; say what it most likely meant, as other commands do
        return ClosestName.to(name, List.of(BROKER.name()))
                .map(closest -> "unknown option --" + name + "; did you mean --" + closest + "? It is not an option here: " + noBroker);
    }

    @Override
    int run(Arguments args) {
        Path dir = args.value("state-dir").or(() -> cx.settings().get().value("master.stateDir")).map(Path::of)
                .orElse(MasterConfig.defaultStateDirectory());
        Path file = dir.resolve("workers.slots");
        if (!Files.exists(file)) {
            throw new IllegalStateException("no master state in " + dir + ": start one with 'binomic master"
                    + (args.has("state-dir") ? " --state-dir " + dir : "") + "', or pass its --state-dir");
        }
        try (WorkerSlots slots = WorkerSlots.openReadOnly(file)) {
            Instant now = Instant.now();
            boolean alive = ProcessHandle.of(slots.masterPid()).map(ProcessHandle::isAlive).orElse(false);
            out.println("master pid " + slots.masterPid() + (alive ? " running" : " NOT RUNNING (last known state)")
                    + ", started " + slots.masterStartedAt() + ", heartbeat every " + millis(slots.heartbeatInterval())
                    + ", hung after " + millis(slots.heartbeatTimeout()));
            Table table = new Table("SLOT", "PID", "STATE", "HEALTH", "HEARTBEAT", "IN-FLIGHT", "SUCCEEDED", "HELD", "FAILED",
                    "RETRIED", "DEAD", "STALE");
            for (SlotSnapshot slot : slots.snapshot()) {
                WorkerCounters c = slot.counters();
                boolean gone = slot.supervision() == Supervision.RESTART_PENDING;
                // A dead worker's last counters stay in its slot; its in-flight tasks are not running
                // any more (they come back by reclaim), so they are not shown as if they were.
                table.row(slot.index(), slot.pid() == 0 ? "-" : Long.toString(slot.pid()), gone ? "DEAD" : slot.state(),
                        health(slot, now, alive), heartbeat(slot, now, slots.heartbeatTimeout()), gone ? "-" : c.inFlight(),
                        c.writtenSucceeded(), c.held(), c.failed(), c.retried(), c.deadLettered(), c.staleSettlements());
            }
            table.print(out);
            return BinomicCli.EXIT_OK;
        }
    }

    /** What the master does about the worker, else the worker's own report. */
    static String health(SlotSnapshot slot, Instant now, boolean masterAlive) {
        String problem = slot.problem().orElse("no reason given");
        return switch (slot.supervision()) {
            case RESTART_PENDING -> masterAlive
                    ? "dead, restarting in " + Math.max(0, Math.ceilDiv(slot.nextStartMillis() - now.toEpochMilli(), 1000)) + " s"
                    : "dead";
            case STOPPING_HUNG -> "hung, stopping";
            case STOPPING_NOT_CONSUMING -> "NOT CONSUMING: " + problem + ", stopping";
            // A worker that stopped (its master gone, or drained) consumes nothing, whatever it last reported.
            case WATCHED -> slot.state() == WorkerState.STOPPED ? "-" : switch (slot.health()) {
                case CONSUMING -> "consuming";
                case NOT_CONSUMING -> "NOT CONSUMING: " + problem;
                // Redis answers but refuses the worker's ACL user a command: an operator's grant fixes it, not a network
                case BROKER_UNREACHABLE -> (problem.contains("(NOPERM)") ? "BROKER REFUSED: " : "BROKER UNREACHABLE: ") + problem;
                case UNKNOWN -> "-";
            };
        };
    }

    private static String heartbeat(SlotSnapshot slot, Instant now, Duration timeout) {
        // A stopped worker sends no more heartbeats by design: LATE would say the master is about to replace it.
        boolean expected = slot.state() != WorkerState.STOPPED;
        return slot.heartbeatAge(now)
                .map(age -> String.format(Locale.ROOT, "%.1fs ago", age.toMillis() / 1000.0)
                        + (expected && age.compareTo(timeout) > 0 ? " LATE" : ""))
                .orElse("never");
    }

    private static String millis(Duration d) { return d.toMillis() + " ms"; }
}
