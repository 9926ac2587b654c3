package io.binomic.core.internal.cli;

import io.binomic.api.ProviderNotFoundException;
import io.binomic.api.BrokerAccessRefusedException;
import io.binomic.api.UnsafeBrokerSettingException;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.BrokerProvider;
import io.binomic.api.spi.TaskProvider;
import io.binomic.core.Binomic;
import io.binomic.core.internal.UnknownBrokerOptionException;
import io.binomic.core.internal.Providers;
import io.binomic.core.internal.process.DrainSignals;
import io.binomic.core.internal.process.Master;
import io.binomic.core.internal.process.MasterConfig;
import io.binomic.core.internal.process.MasterEvent;
import io.binomic.core.internal.process.OperatorTerms;
import io.binomic.core.internal.process.Settings;
import io.binomic.core.internal.web.BinomicMetrics;
import io.binomic.core.internal.web.DashboardPages;
import io.binomic.core.internal.web.DashboardServer;
import io.binomic.core.internal.web.MetricsSource;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

/** {@code binomic master}: runs a master in the foreground until SIGTERM, SIGINT or SIGHUP. */
final class MasterCommand extends Command {
    private static final System.Logger LOG = System.getLogger(MasterCommand.class.getName());
    /** The setting each option sets over the file and environment: the options set it on the builder, not the settings. */
    private static final Map<String, String> SETTING_OF_OPTION = Map.ofEntries(Map.entry("queues", "worker.queues"),
            Map.entry("concurrency", "worker.concurrency"), Map.entry("shutdown-grace", "worker.shutdownGrace"),
            Map.entry("lease-timeout", "worker.leaseTimeout"), Map.entry("reclaim-interval", "worker.reclaimInterval"),
            Map.entry("workers", "master.workers"), Map.entry("heartbeat-interval", "master.heartbeatInterval"),
            Map.entry("heartbeat-timeout", "master.heartbeatTimeout"), Map.entry("start-timeout", "master.startTimeout"),
            Map.entry("kill-grace", "master.killGrace"), Map.entry("restart-backoff", "master.restartBackoff"),
            Map.entry("restart-backoff-max", "master.restartBackoffMax"), Map.entry("state-dir", "master.stateDir"),
            Map.entry("jvm-option", "master.jvmOptions"));

    private static final String PRIVATE_MEMORY_BROKER = "private-memory-broker";

    MasterCommand(Context cx) {
        super(cx, "master", "Start a master that runs and supervises worker JVMs, until SIGTERM or Ctrl-C", List.of(
                BROKER, QUEUES,
                Option.value("workers", "N", "worker JVMs. Defaults to the number of processors ("
                        + Runtime.getRuntime().availableProcessors() + ")"),
                Option.value("concurrency", "N", "tasks each worker runs at once. Defaults to 5"),
                Option.value("heartbeat-interval", "DURATION", "worker heartbeat period. Defaults to 5s"),
                Option.value("heartbeat-timeout", "DURATION", "silence after which a worker is hung. Defaults to 3 x the interval"),
                Option.value("start-timeout", "DURATION", "time a worker may take to start; doubled for the next worker of a slot whose"
                        + " worker did not start in it, up to 10 minutes. Defaults to 60s"),
                Option.value("shutdown-grace", "DURATION", "time a draining worker gives its running tasks. Defaults to 10s"),
                Option.value("kill-grace", "DURATION", "wait between SIGTERM and SIGKILL of a worker. Defaults to 5s"),
                Option.value("lease-timeout", "DURATION", "a dead worker's messages come back this long after its last renewal."
                        + " Defaults to 30s"),
                Option.value("reclaim-interval", "DURATION", "how often workers look for stranded messages. Defaults to 10s, or half the lease when shorter"),
                Option.value("restart-backoff", "DURATION", "wait before the 2nd restart in a row, doubling after. Defaults to 1s"),
                Option.value("restart-backoff-max", "DURATION", "longest restart wait. Defaults to 60s"),
                Option.value("state-dir", "DIR", "segment file and worker logs. Defaults to " + MasterConfig.defaultStateDirectory()),
                Option.repeatable("jvm-option", "OPTION", "option for the worker JVMs, e.g. --jvm-option=-Xmx512m; replaces the"
                        + " default that decides the same (defaults: " + String.join(" ", MasterConfig.DEFAULT_WORKER_JVM_OPTIONS)
                        + " and an -Xmx of 96 MiB + 9 KiB per task of --concurrency)"),
                Option.value("dashboard-port", "PORT", "serve /metrics (all worker JVMs) and the dashboard on this port. Defaults to none"),
                Option.value("dashboard-address", "ADDRESS", "address the dashboard listens on. Defaults to 127.0.0.1; another"
                        + " needs $BINOMIC_MASTER_DASHBOARD_TOKEN"),
                Option.flag("dashboard-read-only", "the dashboard refuses every change"),
                Option.flag(PRIVATE_MEMORY_BROKER, "let each worker JVM run a memory:// broker of its own, which nothing else"
                        + " reaches (for a worker that only starts, as the AOT cache training does)")), """
                Settings: --config FILE (or $BINOMIC_CONFIG), then BINOMIC_* environment variables, then
                these options, each over the one before; the workers get the result, key prefix,
                Redisson file, task defaults and limits included (module-info-docs/configuration.md).
                Workers find the application's tasks through TaskProvider services on the module path;
                they never run the application's main(), so what handlers need is set up by the provider.
                SIGTERM or Ctrl-C drains every worker (running tasks get the shutdown grace; the rest
                stay pending for another worker to reclaim) and exits 0. Watch it with 'binomic workers'.
                Durations: 500ms, 5s, 2m, 1h or ISO-8601 (PT5S).
                """);
    }

    @Override
    int run(Arguments args) throws UsageException {
        MasterConfig config = config(args);
        Optional<String> refusal = config.workerJvmRefusal(System.getenv());
        if (refusal.isPresent()) {
            String problem = "a worker JVM does not start with the options " + String.join(" ", config.workerJvmOptions(System.getenv()))
                    + ": " + refusal.get() + "; fix or remove the option";
            throw args.has("jvm-option") ? new UsageException(problem + " (--jvm-option)") : UsageException.ofSetting(problem
                    + cx.settings().get().origin("master.jvmOptions").map(o -> " (master.jvmOptions from " + o + ")").orElse(""));
        }
        DashboardServer.Settings dashboardSettings = dashboardSettings(args);
        refuseWorkersWithNothingToDo(args, config);
        inspectBroker(config);
        // The stop is reported on stdout, as the start is: the command's own lines, whatever the logging configuration.
        Master master = new Master(config, event -> {
            if (event instanceof MasterEvent.Drained d) {
                out.println("worker " + d.slot() + " (pid " + d.pid() + ") "
                        + (d.killed() ? "killed: it did not drain in time" : "stopped, exit code " + d.exitCode()));
            }
        });
        DashboardServer dashboard;
        Binomic viewer = null;
        try {
            master.start();
            // Warned of once the workers start, so that a refusal of the start stays the command's one line.
            if (!args.has(PRIVATE_MEMORY_BROKER)) { // no producer reaches a private broker: its workers only have to start
                warnOfQueuesNoTaskUses(config.queues(), taskQueues());
            }
            if (dashboardSettings != null) {
                viewer = BinomicCli.connect(cx.settings().get(), config.broker().url(), config.queues());
                Binomic client = viewer;
                dashboard = DashboardServer.start(dashboardSettings, () -> MetricsSource.render(new BinomicMetrics(client),
                        new MetricsSource.Slots(master.slots(), master::restarts)),
                        new DashboardPages(client, () -> master.slots().snapshot(), master::restarts,
                                dashboardSettings.readOnly()));
                out.println("dashboard on " + DashboardServer.announcement(dashboard.uri(), dashboardSettings.readOnly()));
            } else {
                dashboard = null;
            }
        } catch (RuntimeException e) {
            master.close();
            if (viewer != null) {
                viewer.close();
            }
            throw e;
        }
        Stop stop = new Stop(master, dashboard, viewer);
        // SIGTERM, SIGINT and SIGHUP stop the master on this thread, before the JVM's shutdown: in a shutdown hook, the stop would
        // race java.util.logging's own hook, which removes the handlers while the master still logs its workers' drain.
        CountDownLatch signalled = new CountDownLatch(1);
        DrainSignals.install(signalled::countDown);
        // Any other end of the JVM (a JVM where the signals cannot be handled) stops the master in this hook.
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            int status = stop.run();
            if (!stop.returned) {
                // A JVM ended by a signal exits 128 + its number (SIGTERM 143). A master that drained its workers
                // stopped cleanly, and scripts and service managers should see that as 0.
                Runtime.getRuntime().halt(status);
            }
        }, "binomic-master-shutdown"));
        out.println("master pid " + ProcessHandle.current().pid() + " runs " + config.workers() + " worker(s); state in "
                + config.stateDirectory() + "; stop with SIGTERM or Ctrl-C");
        out.flush();
        DrainSignals.awaitSignal(signalled); // only a signal ends a master
        int status = stop.run();
        stop.returned = true;
        return status;
    }

    /** The master's stop, done once: on SIGTERM, SIGINT or SIGHUP by the command's thread, on any other end of the JVM by its hook. */
    private final class Stop {
        private final Master master;
        private final DashboardServer dashboard;
        private final Binomic viewer;
        private Integer status;
        /** Set when the command's thread returns the status, which the JVM's exit then carries. */
        volatile boolean returned;

        Stop(Master master, DashboardServer dashboard, Binomic viewer) {
            this.master = master;
            this.dashboard = dashboard;
            this.viewer = viewer;
        }

        /** Stops the dashboard and drains the workers, or waits for the stop under way; returns the exit code. */
        synchronized int run() {
            if (status != null) {
                return status;
            }
            if (dashboard != null) {
                dashboard.close();
                viewer.close();
            }
            long pid = ProcessHandle.current().pid();
            out.println("master pid " + pid + " draining its workers");
            out.flush();
            try {
                master.close();
                out.println("master pid " + pid + " stopped");
                status = BinomicCli.EXIT_OK;
            } catch (RuntimeException e) {
                out.println("master pid " + pid + " failed to stop cleanly: " + e);
                status = BinomicCli.EXIT_FAILED;
            }
            out.flush();
            return status;
        }
    }

    /**
     * Refuses what would start workers that can never run a job: a {@code memory://} broker, which
     * lives inside one JVM (each worker would get a private one nothing else reaches), or no queue to
     * read (each worker would exit at start, and be restarted with a growing back-off, forever).
     */
    private void refuseWorkersWithNothingToDo(Arguments args, MasterConfig config) throws UsageException {
        Settings given = cx.settings().get();
        if (config.queues().isEmpty() && taskQueues().isEmpty()) {
            throw new UsageException("the workers would have no queue to read: no task on the module path (no TaskProvider"
                    + " service) and no --queues or worker.queues; put the application's modules on the module path, or name"
                    + " the queues with --queues");
        }
        String url = config.broker().url();
        if (url.regionMatches(true, 0, "memory:", 0, "memory:".length()) && !args.has(PRIVATE_MEMORY_BROKER)) {
            String problem = "memory:// is a broker inside one JVM: each worker JVM would get its own, which no producer,"
                    + " CLI command or other worker can reach; give the workers a shared broker such as --broker redis://localhost:6379"
                    + " (or --" + PRIVATE_MEMORY_BROKER + " to mean it)";
            throw args.has(BROKER.name()) ? new UsageException(problem)
                    : UsageException.ofSetting(problem + given.origin("broker.url").map(o -> " (broker.url from " + o + ")").orElse(""));
        }
    }

    /**
     * A queue to read that no task on the module path uses is most likely a typo: the workers would
     * read it and dead-letter what they find there as a task they do not know, while the queue meant
     * goes unread. Warned of, not refused: the tasks may come to the workers another way.
     */
    private void warnOfQueuesNoTaskUses(List<String> queues, List<String> taskQueues) {
        queuesNoTaskUses(queues, taskQueues).forEach(warning -> err.println("binomic master: warning: " + warning));
    }

    /**
     * A line for each of {@code queues} that none of {@code taskQueues} is, with the closest; with no task at all, one line:
     * the workers, on the master's module path, would dead-letter every job they read.
     */
    static List<String> queuesNoTaskUses(List<String> queues, List<String> taskQueues) {
        if (taskQueues.isEmpty()) {
            return queues.isEmpty() ? List.of() : List.of("no task on the module path (no TaskProvider service): the workers can run"
                    + " no job, and dead-letter each one they read from " + String.join(", ", queues) + " as TASK_NOT_FOUND; put the"
                    + " application's modules on the module path (app/ or BINOMIC_MODULE_PATH), each declaring"
                    + " 'provides io.binomic.api.spi.TaskProvider with ...' in its module-info (or a META-INF/services file on the"
                    + " classpath)");
        }
        return queues.stream().filter(queue -> !taskQueues.contains(queue))
                .map(queue -> "no task on the module path uses queue '" + queue + "'" + ClosestName.hint(queue, taskQueues)
                        + " (the tasks' queues: " + String.join(", ", taskQueues) + ")")
                .toList();
    }

    /** The queues of the tasks on the module path: what each worker JVM, started on the same path, reads by default. */
    private static List<String> taskQueues() {
        List<String> queues = new ArrayList<>();
        ServiceLoader.load(TaskProvider.class).forEach(provider -> provider.tasks().forEach(binding -> {
            if (!queues.contains(binding.task().queue())) {
                queues.add(binding.task().queue());
            }
        }));
        return queues;
    }

    /**
     * Starts the broker once with no queue, which runs its checks of the server's settings, and
     * closes it again: the master itself keeps no broker connection. A server setting every worker
     * would refuse (Redis that may evict Binomic's keys) is refused here with the broker's own
     * message, instead of by each worker JVM on each restart, the reason only in their logs. A broker
     * that cannot be reached is no reason to refuse: the workers start and retry, as after an outage.
     *
     * @throws UnsafeBrokerSettingException when the broker refuses a setting of its server
     */
    private void inspectBroker(MasterConfig config) throws UsageException {
        Broker broker;
        try {
            broker = Providers.selectBroker(config.broker(), Providers.load(BrokerProvider.class,
                    ServiceLoader.load(BrokerProvider.class))).create(config.broker());
        } catch (IllegalArgumentException e) {
            // A broker option with a bad value: every worker would fail on it the same way.
            throw UsageException.ofSetting(e.getMessage() + cx.settings().get().originsOf("broker"));
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot check the broker before starting the workers: {0}; starting them anyway", e.getMessage());
            return;
        }
        try {
            broker.start(List.of());
        } catch (UnsafeBrokerSettingException e) {
            throw e;
        } catch (BrokerAccessRefusedException e) {
            // Redis answered and refused the credentials or the TLS: each worker would fail its start on it, restart after
            // restart, for a setting no retry changes.
            throw new RefusedSettingException(e.getMessage() + "; the workers are not started, as each would be refused the same"
                    + " way" + cx.settings().get().originsOf("broker"), e);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "cannot check the settings of the broker at {0} before starting the workers: {1};"
                    + " starting them, they retry until it answers", config.broker().redactedUrl(), e.getMessage());
        } finally {
            broker.close();
        }
    }

    /** The dashboard's settings from the options over the settings file and environment; null for no dashboard. */
    private DashboardServer.Settings dashboardSettings(Arguments args) throws UsageException {
        Settings given = cx.settings().get();
        Optional<String> port = args.value("dashboard-port").or(() -> given.value("master.dashboardPort"));
        if (port.isEmpty()) {
            for (String without : new String[] {"master.dashboardAddress", "master.dashboardToken", "master.dashboardReadOnly"}) {
                if (given.value(without).isPresent()) {
                    throw UsageException.ofSetting(given.origin(without).orElse(without) + ": " + without + " has no effect without a dashboard"
                            + " port: set master.dashboardPort (or --dashboard-port), or remove it");
                }
            }
            for (String option : new String[] {"dashboard-address", "dashboard-read-only"}) {
                if (args.has(option)) {
                    throw new UsageException("--" + option + " has no effect without --dashboard-port: add it, or leave --" + option + " out");
                }
            }
            return null;
        }
        String address = args.value("dashboard-address").or(() -> given.value("master.dashboardAddress")).orElse("127.0.0.1");
        String token = given.value("master.dashboardToken").orElse(null);
        String portOrigin = args.value("dashboard-port").isPresent() ? "--dashboard-port"
                : given.origin("master.dashboardPort").orElse("master.dashboardPort");
        boolean readOnly = args.has("dashboard-read-only") || readOnlySetting(given);
        int p;
        try {
            p = Integer.parseInt(port.get().strip());
        } catch (NumberFormatException e) {
            String problem = portOrigin + ": the dashboard port must be a number 0..65535, was '" + port.get() + "'";
            throw args.value("dashboard-port").isPresent() ? new UsageException(problem) : UsageException.ofSetting(problem);
        }
        return DashboardCommand.serverSettings(address, p, token, readOnly,
                "master.dashboardToken (best as $BINOMIC_MASTER_DASHBOARD_TOKEN)");
    }

    /**
     * {@code master.dashboardReadOnly}: {@code true} or {@code false} only. Anything else is refused,
     * never read as false: a typo must not leave a dashboard the operator meant read-only writable.
     */
    private static boolean readOnlySetting(Settings given) throws UsageException {
        String value = given.value("master.dashboardReadOnly").map(String::strip).orElse("false");
        if (value.equalsIgnoreCase("true") || value.equalsIgnoreCase("false")) {
            return Boolean.parseBoolean(value);
        }
        throw UsageException.ofSetting(given.origin("master.dashboardReadOnly").orElse("master.dashboardReadOnly")
                + ": master.dashboardReadOnly must be true or false, was '" + value + "'");
    }

    /** File and environment first, then each option given here over them. */
    private MasterConfig config(Arguments args) throws UsageException {
        MasterConfig.Builder builder;
        Settings given = cx.settings().get();
        try {
            if (args.has(BROKER.name())) {
                given = given.with("broker.url", url(args, cx.env()), "--broker");
            }
            builder = given.master(DEFAULT_URL, SETTING_OF_OPTION.entrySet().stream().filter(e -> args.has(e.getKey()))
                    .map(Map.Entry::getValue).collect(Collectors.toSet()));
        } catch (IllegalArgumentException e) {
            throw UsageException.ofSetting(e.getMessage());
        }
        if (args.has("queues")) {
            builder.queues(args.list("queues"));
        }
        args.intValue("concurrency", 1).ifPresent(builder::concurrency);
        if (args.has("jvm-option")) {
            builder.jvmOptions(args.values("jvm-option"));
        }
        args.intValue("workers", 1).ifPresent(builder::workers);
        args.value("state-dir").map(Path::of).ifPresent(builder::stateDirectory);
        args.duration("heartbeat-interval").ifPresent(builder::heartbeatInterval);
        args.duration("heartbeat-timeout").ifPresent(builder::heartbeatTimeout);
        args.duration("start-timeout").ifPresent(builder::startTimeout);
        args.duration("shutdown-grace").ifPresent(builder::shutdownGrace);
        args.duration("kill-grace").ifPresent(builder::killGrace);
        args.duration("lease-timeout").ifPresent(builder::leaseTimeout);
        args.duration("reclaim-interval").ifPresent(builder::reclaimInterval);
        args.duration("restart-backoff").ifPresent(builder::restartBackoffInitial);
        args.duration("restart-backoff-max").ifPresent(builder::restartBackoffMax);
        MasterConfig config;
        try {
            config = builder.build();
        } catch (IllegalArgumentException e) {
            // The builder names its fields: say which keys those are and where each value came from. When one
            // came from a file or the environment, the command line alone is not what to fix: no usage.
            List<String> from = new ArrayList<>();
            boolean fromSettings = false;
            for (String key : OperatorTerms.keysNamedIn(e.getMessage())) {
                Optional<String> flag = SETTING_OF_OPTION.entrySet().stream().filter(o -> o.getValue().equals(key) && args.has(o.getKey()))
                        .map(o -> "--" + o.getKey()).findFirst();
                Optional<String> origin = flag.isPresent() ? flag : given.origin(key);
                fromSettings |= flag.isEmpty() && origin.isPresent();
                origin.ifPresent(o -> from.add(key + " from " + o));
            }
            String origins = from.isEmpty() ? "" : " (" + String.join(", ", from) + ")";
            throw fromSettings ? UsageException.ofSetting(e.getMessage() + origins) : new UsageException(e.getMessage() + origins);
        }
        try {
            // The workers run on this module path: a URL no broker here serves would only show as
            // workers failing to start, restarted with a growing back-off, the reason in their logs.
            Providers.selectBroker(config.broker(), Providers.load(
                    BrokerProvider.class, ServiceLoader.load(BrokerProvider.class)));
        } catch (UnknownBrokerOptionException e) {
            // Every worker would refuse it the same way and be restarted for ever: a setting to fix, exit 2.
            throw UsageException.ofSetting(given.refusedOption(e));
        } catch (ProviderNotFoundException e) {
            String problem = BinomicCli.oneLine(e) + given.originsOf("master");
            throw args.has(BROKER.name()) ? new UsageException(problem)
                    : UsageException.ofSetting(problem + given.origin("broker.url").map(o -> " (broker.url from " + o + ")").orElse(""));
        }
        return config;
    }
}
