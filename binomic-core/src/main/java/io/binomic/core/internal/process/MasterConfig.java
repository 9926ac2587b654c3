package io.binomic.core.internal.process;

import io.binomic.api.BrokerConfig;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import io.binomic.api.internal.Once;
import com.sun.management.OperatingSystemMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * How a {@link Master} runs its worker JVMs and decides that one is dead or hung. Each component is
 * documented, with its default, on its {@link Builder} setter. The broker settings reach every worker
 * in a settings file only its user can read, never on its command line.
 */
public record MasterConfig(BrokerConfig broker, TaskDefaults taskDefaults, List<String> queues, int workers, int concurrency,
                           Duration heartbeatInterval, Duration heartbeatTimeout, Duration startTimeout, Duration shutdownGrace,
                           Duration killGrace, Duration leaseTimeout, Duration pollTimeout, Duration reclaimInterval, Duration restartBackoffInitial, Duration restartBackoffMax, Path stateDirectory,
                           List<String> jvmOptions) {

    /**
     * The worker JVM options the master passes besides the operator's ({@link Builder#jvmOptions}),
     * which keep a worker's resident memory near what it uses without costing throughput. A worker's
     * live heap is small (about 20 MiB running 50 short tasks at once at 1,500 tasks/s) and nearly
     * all it allocates dies young:
     * <ul>
     *   <li>{@code -XX:+UseSerialGC}: G1, the JVM's default collector on two or more cores, sizes its
     *       heap from the machine's memory (an initial heap of 1/64 of it, a maximum of 1/4) and touches
     *       all of its young generation between collections: a worker's resident memory was 330-350 MiB
     *       after 4 minutes at 1,500 tasks/s, and kept rising. The serial collector touches only the
     *       heap it sizes, its young collections copy the few live objects of a small heap, and it
     *       needs no core for concurrent work, which a worker sharing a machine does not have.</li>
     *   <li>{@code -Xms80m -Xmn64m}: a fixed young generation of 64 MiB, so that a draining worker
     *       collects several times less often than with the few MiB the serial collector sizes by
     *       itself (with which it drained 0.7-0.8 as fast as with G1), and an old generation that
     *       starts at 16 MiB and grows as the live data needs, up to the maximum heap the master adds
     *       to these, sized from the concurrency ({@link #defaultMaximumHeap}).</li>
     *   <li>{@code -XX:TrimNativeHeapInterval=10000}: every 10 s the JVM hands the system back the
     *       native memory it freed (the JIT compilers' arenas above all), which the C library
     *       otherwise keeps.</li>
     * </ul>
     */
    public static final List<String> DEFAULT_WORKER_JVM_OPTIONS =
            List.of("-XX:+UseSerialGC", "-Xms80m", "-Xmn64m", "-XX:TrimNativeHeapInterval=10000");

    /** The young generation {@link #DEFAULT_WORKER_JVM_OPTIONS} fix, MiB. */
    static final long DEFAULT_YOUNG_MIB = 64;
    /** The old generation of the default maximum heap before the running tasks' share, MiB: about twice a worker's own live data. */
    static final long DEFAULT_OLD_BASE_MIB = 32;
    /** The old generation the default maximum heap gives each running task, KiB: about twice a short task's live heap. */
    static final long DEFAULT_OLD_KIB_PER_TASK = 9;

    /**
     * The default maximum heap of a worker running {@code concurrency} tasks at once: the fixed young
     * generation, plus an old generation of {@value #DEFAULT_OLD_BASE_MIB} MiB and
     * {@value #DEFAULT_OLD_KIB_PER_TASK} KiB per task ({@code -Xmx97m} at concurrency 50, {@code -Xmx105m}
     * at 1,000, {@code -Xmx975m} at 100,000). Without a maximum the serial collector does not collect
     * its old generation while it may still expand it: each young collection promotes some objects
     * that die later (about 2 MiB a minute at 1,500 tasks/s), and the old generation grows by as much,
     * up to a quarter of the memory, however little of it is live (16-20 MiB). With this maximum it
     * collects the old generation once it is full, so the heap stops growing at the maximum: two
     * workers at 1,500 tasks/s ended a 10-minute soak at 202-212 MiB of resident memory, against
     * 239-255 MiB and rising without it (and Netty's direct buffers stayed at 2 MiB instead of
     * growing to 34-46). A handler that holds more (a cache, a large document) needs an {@code -Xmx}
     * of the operator's.
     */
    static String defaultMaximumHeap(int concurrency) {
        long oldMib = DEFAULT_OLD_BASE_MIB + (concurrency * DEFAULT_OLD_KIB_PER_TASK + 1023) / 1024;
        return "-Xmx" + (DEFAULT_YOUNG_MIB + oldMib) + "m";
    }

    /**
     * The options the master passes its workers besides the operator's: {@link #DEFAULT_WORKER_JVM_OPTIONS}
     * and the maximum heap sized from {@link #concurrency} ({@link #defaultMaximumHeap}).
     */
    public List<String> defaultWorkerJvmOptions() {
        List<String> options = new ArrayList<>(DEFAULT_WORKER_JVM_OPTIONS);
        options.add(3, defaultMaximumHeap(concurrency));
        return List.copyOf(options);
    }

    /** The sizes a worker JVM takes once; given twice, the JVM keeps the last. */
    private static final List<String> SIZE_OPTIONS = List.of("-Xmx", "-Xms", "-Xmn", "-Xss");

    private static final Pattern QUEUE = Pattern.compile("[A-Za-z0-9_.:-]{1,200}");

    public MasterConfig {
        Objects.requireNonNull(broker, "broker must not be null");
        Objects.requireNonNull(taskDefaults, "taskDefaults must not be null");
        queues = List.copyOf(Objects.requireNonNull(queues, "queues must not be null (empty means all)"));
        for (String q : queues) {
            if (!QUEUE.matcher(q).matches()) {
                throw new IllegalArgumentException("queues: '" + q + "' is not a valid queue name (1-200 of letters, digits, '_', '.', ':', '-')");
            }
        }
        if (workers < 1 || workers > WorkerSlots.MAX_SLOTS) {
            throw new IllegalArgumentException("workers must be 1.." + WorkerSlots.MAX_SLOTS + ", was " + workers);
        }
        if (concurrency < 1) {
            throw new IllegalArgumentException("concurrency must be >= 1, was " + concurrency);
        }
        requirePositive("heartbeatInterval", heartbeatInterval);
        requirePositive("heartbeatTimeout", heartbeatTimeout);
        if (heartbeatTimeout.compareTo(heartbeatInterval.multipliedBy(2)) < 0) {
            // One late heartbeat (a GC pause, a busy machine) must not get a healthy worker killed.
            throw new IllegalArgumentException("heartbeatTimeout must be at least twice heartbeatInterval ("
                    + heartbeatInterval + "), was " + heartbeatTimeout);
        }
        requirePositive("startTimeout", startTimeout);
        requireNotNegative("shutdownGrace", shutdownGrace);
        requirePositive("killGrace", killGrace);
        requirePositive("leaseTimeout", leaseTimeout);
        requirePositive("pollTimeout", pollTimeout);
        if (leaseTimeout.compareTo(pollTimeout) <= 0) {
            throw new IllegalArgumentException("leaseTimeout must be longer than pollTimeout ("
                    + pollTimeout + "), was " + leaseTimeout);
        }
        requirePositive("reclaimInterval", reclaimInterval);
        requirePositive("restartBackoffInitial", restartBackoffInitial);
        requirePositive("restartBackoffMax", restartBackoffMax);
        if (restartBackoffMax.compareTo(restartBackoffInitial) < 0) {
            throw new IllegalArgumentException("restartBackoffMax (" + restartBackoffMax
                    + ") must not be shorter than restartBackoffInitial (" + restartBackoffInitial + ")");
        }
        Objects.requireNonNull(stateDirectory, "stateDirectory must not be null");
        jvmOptions = List.copyOf(Objects.requireNonNull(jvmOptions, "jvmOptions must not be null"));
        for (String size : SIZE_OPTIONS) {
            // The JVM takes the last of them without a word: the operator meant one, and may not be looking at the last.
            List<String> given = jvmOptions.stream().filter(o -> o.startsWith(size)).toList();
            if (given.size() > 1) {
                throw new IllegalArgumentException("jvmOptions give " + size + " more than once (" + String.join(", ", given)
                        + "), and the JVM would take the last one silently: keep one");
            }
        }
    }

    private static void requirePositive(String field, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(field + " must be positive, was " + value);
        }
    }

    private static void requireNotNegative(String field, Duration value) {
        if (value == null || value.isNegative()) {
            throw new IllegalArgumentException(field + " must not be negative, was " + value);
        }
    }

    /** The settings of each worker JVM: what {@link Settings#ofFile} reads in the worker. */
    public WorkerConfig workerConfig() {
        return WorkerConfig.builder().queues(queues).concurrency(concurrency).shutdownGrace(shutdownGrace)
                .leaseTimeout(leaseTimeout).pollTimeout(pollTimeout).reclaimInterval(reclaimInterval).build();
    }

    /**
     * The options each worker JVM gets: {@link #defaultWorkerJvmOptions} less those that
     * {@link #jvmOptions} or the options the workers inherit through {@code environment}
     * ({@code JAVA_TOOL_OPTIONS}, {@code JDK_JAVA_OPTIONS}) decide, then {@link #jvmOptions}.
     */
    public List<String> workerJvmOptions(Map<String, String> environment) {
        return JvmOptions.merge(defaultWorkerJvmOptions(), jvmOptions, JvmOptions.inherited(environment), physicalMemory());
    }

    /**
     * The memory the workers' JVMs see, which they share with the master: the container's limit when
     * there is one, as the JVM's own heap sizing reads it.
     */
    private static long physicalMemory() {
        OperatingSystemMXBean os = ManagementFactory.getPlatformMXBean(OperatingSystemMXBean.class);
        long total = os == null ? 0 : os.getTotalMemorySize();
        return total > 0 ? total : Long.MAX_VALUE;
    }

    /**
     * Why a JVM does not start with {@link #workerJvmOptions} (the JVM's own line, such as "Unrecognized VM option
     * 'Bogus'"), found by running {@code java <options> -version} once; empty when it starts. Checked before any
     * worker starts: otherwise each worker fails at start and is restarted, the reason only in its log.
     */
    public Optional<String> workerJvmRefusal(Map<String, String> environment) {
        return JvmOptions.refusal(workerJvmOptions(environment));
    }

    /** The file in which the master hands its resolved settings to its workers; readable by its user only. */
    public Path workerSettingsFile() { return stateDirectory.resolve("worker.conf"); }

    /** The segment file the master creates and its workers and {@code binomic workers} map. */
    public Path segmentFile() { return stateDirectory.resolve("workers.slots"); }

    /** The log file of the worker in {@code slot}: its stdout and stderr, appended across restarts. */
    public Path logFile(int slot) { return stateDirectory.resolve("logs").resolve("worker-" + slot + ".log"); }

    /** The default state directory: {@code <java.io.tmpdir>/binomic-<user.name>}. */
    public static Path defaultStateDirectory() {
        return Path.of(System.getProperty("java.io.tmpdir"), "binomic-" + System.getProperty("user.name", "user"));
    }

    public static Builder builder() { return new Builder(); }

    /**
     * Builds {@link MasterConfig}: each setting once (a second call is an {@link IllegalArgumentException}
     * naming the field and both values), checked by {@link #build()}.
     */
    public static final class Builder {
        private final Once<String> brokerUrl = new Once<>("brokerUrl", null, url -> "a URL");
        private final Once<BrokerConfig> broker = new Once<>("broker", null);
        private final Once<TaskDefaults> taskDefaults = new Once<>("taskDefaults", TaskDefaults.defaults());
        private final Once<List<String>> queues = new Once<>("queues", List.of());
        private final Once<Integer> workers = new Once<>("workers", Runtime.getRuntime().availableProcessors());
        private final Once<Integer> concurrency = new Once<>("concurrency", 5);
        private final Once<Duration> heartbeatInterval = new Once<>("heartbeatInterval", Duration.ofSeconds(5));
        private final Once<Duration> heartbeatTimeout = new Once<>("heartbeatTimeout", null);
        private final Once<Duration> startTimeout = new Once<>("startTimeout", Duration.ofSeconds(60));
        private final Once<Duration> shutdownGrace = new Once<>("shutdownGrace", Duration.ofSeconds(10));
        private final Once<Duration> killGrace = new Once<>("killGrace", Duration.ofSeconds(5));
        private final Once<Duration> leaseTimeout = new Once<>("leaseTimeout", Duration.ofSeconds(30));
        private final Once<Duration> reclaimInterval = new Once<>("reclaimInterval", Duration.ofSeconds(10));
        private final Once<Duration> pollTimeout = new Once<>("pollTimeout", WorkerConfig.defaults().pollTimeout());
        private final Once<Duration> restartBackoffInitial = new Once<>("restartBackoffInitial", Duration.ofSeconds(1));
        private final Once<Duration> restartBackoffMax = new Once<>("restartBackoffMax", Duration.ofSeconds(60));
        private final Once<Path> stateDirectory = new Once<>("stateDirectory", defaultStateDirectory());
        private final Once<List<String>> jvmOptions = new Once<>("jvmOptions", List.of());

        private Builder() { }

        /**
         * Broker URL for the workers, such as {@code redis://localhost:6379}, other broker settings at
         * their defaults; a shortcut for {@link #broker}. One of the two is required: there is no default.
         */
        public Builder brokerUrl(String brokerUrl) { return Once.set(this, this.brokerUrl, brokerUrl); }

        /** All broker settings of the workers (key prefix, Redisson file, limits...). One of this and {@link #brokerUrl} is required. */
        public Builder broker(BrokerConfig broker) { return Once.set(this, this.broker, broker); }

        /** Task defaults of the workers. Defaults to {@link TaskDefaults#defaults()}. */
        public Builder taskDefaults(TaskDefaults taskDefaults) { return Once.set(this, this.taskDefaults, taskDefaults); }

        /** Longest block of one fetch of a worker; the lease must be longer. Defaults to 1 s, or half the lease timeout when that is shorter (as {@code WorkerConfig}). */
        public Builder pollTimeout(Duration pollTimeout) { return Once.set(this, this.pollTimeout, pollTimeout); }

        /** Queues to consume. Defaults to every queue of the tasks the workers discover. */
        public Builder queues(List<String> queues) { return Once.set(this, this.queues, queues); }

        /** Worker JVMs. Defaults to the number of available processors. */
        public Builder workers(int workers) { return Once.set(this, this.workers, workers); }

        /** Tasks each worker runs at once. Defaults to 5. */
        public Builder concurrency(int concurrency) { return Once.set(this, this.concurrency, concurrency); }

        /** Heartbeat period of the workers and check period of the master. Defaults to 5 s. */
        public Builder heartbeatInterval(Duration heartbeatInterval) { return Once.set(this, this.heartbeatInterval, heartbeatInterval); }

        /** Heartbeat age after which a live worker is hung. Defaults to 3 x the heartbeat interval (15 s). */
        public Builder heartbeatTimeout(Duration heartbeatTimeout) { return Once.set(this, this.heartbeatTimeout, heartbeatTimeout); }

        /**
         * Time a new worker may take to report RUNNING (JVM start, broker connection). Defaults to 60 s.
         * A worker killed for not starting in time gives the next one of its slot twice as long, up to
         * 10 minutes (or this, if longer), so that a host too slow for it still gets workers running.
         */
        public Builder startTimeout(Duration startTimeout) { return Once.set(this, this.startTimeout, startTimeout); }

        /** How long a draining worker waits for its running tasks. Defaults to 10 s. */
        public Builder shutdownGrace(Duration shutdownGrace) { return Once.set(this, this.shutdownGrace, shutdownGrace); }

        /**
         * Wait between SIGTERM and SIGKILL when a worker must go; a worker asked to drain is killed after
         * {@code shutdownGrace} + 2 s + this. Defaults to 5 s.
         */
        public Builder killGrace(Duration killGrace) { return Once.set(this, this.killGrace, killGrace); }

        /**
         * The workers' lease: a message whose worker died comes back to the queue this long after
         * the worker last renewed it. Defaults to 30 s (as {@code WorkerConfig}).
         */
        public Builder leaseTimeout(Duration leaseTimeout) { return Once.set(this, this.leaseTimeout, leaseTimeout); }

        /** How often the workers look for stranded messages. Defaults to 10 s, or half the lease timeout when that is shorter (as {@code WorkerConfig}). */
        public Builder reclaimInterval(Duration reclaimInterval) { return Once.set(this, this.reclaimInterval, reclaimInterval); }

        /**
         * Restart wait of a worker that keeps failing: the first restart is immediate, the second
         * waits this long, each further one twice as long. Defaults to 1 s.
         */
        public Builder restartBackoffInitial(Duration initial) { return Once.set(this, this.restartBackoffInitial, initial); }

        /** Longest restart wait. Defaults to 60 s. */
        public Builder restartBackoffMax(Duration restartBackoffMax) { return Once.set(this, this.restartBackoffMax, restartBackoffMax); }

        /** Directory of the segment file and the worker logs. Defaults to {@code <java.io.tmpdir>/binomic-<user.name>}. */
        public Builder stateDirectory(Path stateDirectory) { return Once.set(this, this.stateDirectory, stateDirectory); }

        /**
         * JVM options of the workers, such as {@code -Xmx1g} or {@code -XX:+UseZGC}. Defaults to none;
         * the master passes {@link #defaultWorkerJvmOptions} besides these, less each default these
         * decide: a collector ({@code -XX:+Use...GC}) replaces the default collector and heap sizing, an
         * initial heap or young generation ({@code -Xms...}, {@code -Xmn...}) the default heap sizing, a
         * maximum heap the default maximum, and the default heap sizing too when it is under 160 MiB ({@code -Xmx...}, or the maximum the JVM derives from
         * {@code -XX:MaxRAM=...} or {@code -XX:MaxRAMPercentage=...}), a flag the default of the same flag ({@link MasterConfig#workerJvmOptions}). {@code -XX:+UseG1GC}
         * gives the JVM's own collector and heap sizing.
         */
        public Builder jvmOptions(List<String> jvmOptions) { return Once.set(this, this.jvmOptions, jvmOptions); }

        private BrokerConfig brokerConfig() {
            BrokerConfig broker = this.broker.get();
            String brokerUrl = this.brokerUrl.get();
            if (broker != null && brokerUrl != null) {
                throw new IllegalArgumentException("brokerUrl and broker are both set: give the URL inside broker");
            }
            if (broker != null) {
                return broker;
            }
            if (brokerUrl == null || brokerUrl.isBlank() || !brokerUrl.contains(":")) {
                throw new IllegalArgumentException("brokerUrl must be a URL such as redis://localhost:6379, was '" + brokerUrl + "'");
            }
            return BrokerConfig.builder().url(brokerUrl).build();
        }

        /** @throws IllegalArgumentException naming the first invalid field */
        public MasterConfig build() {
            Duration interval = heartbeatInterval.get();
            Duration timeout = heartbeatTimeout.get() != null ? heartbeatTimeout.get() : interval == null ? null : interval.multipliedBy(3);
            // As WorkerConfig: left at their defaults, the poll and the reclaim period follow a short lease.
            Duration halfLease = leaseTimeout.get() == null ? null : leaseTimeout.get().dividedBy(2);
            return new MasterConfig(brokerConfig(), taskDefaults.get(), queues.get(), workers.get(), concurrency.get(), interval,
                    timeout, startTimeout.get(), shutdownGrace.get(), killGrace.get(), leaseTimeout.get(),
                    halfLease == null ? pollTimeout.get() : Once.atMostUnlessGiven(pollTimeout, halfLease),
                    halfLease == null ? reclaimInterval.get() : Once.atMostUnlessGiven(reclaimInterval, halfLease),
                    restartBackoffInitial.get(), restartBackoffMax.get(), stateDirectory.get(), jvmOptions.get());
        }
    }
}
