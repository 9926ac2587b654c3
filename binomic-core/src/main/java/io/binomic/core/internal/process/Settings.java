package io.binomic.core.internal.process;

import io.binomic.api.Backoff;
import io.binomic.api.BrokerConfig;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import io.binomic.core.internal.UnknownBrokerOptionException;
import io.binomic.core.internal.cli.ClosestName;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The one configuration source of the master, its worker JVMs and the CLI. Each setting is a
 * key such as {@code broker.keyPrefix}; a value comes from, lowest precedence first:
 * <ol>
 *   <li>the built-in default (the one the config builders document),</li>
 *   <li>the configuration file: {@code --config FILE}, else the file named by
 *       {@value #FILE_ENV},</li>
 *   <li>an environment variable: {@code BINOMIC_} and the key in upper case with {@code _} for
 *       each dot and word break ({@code broker.keyPrefix} is {@code BINOMIC_BROKER_KEY_PREFIX}),</li>
 *   <li>a command-line flag ({@code --broker}, {@code --concurrency}, ...).</li>
 * </ol>
 *
 * <p>The file has one {@code key = value} per line; blank lines and lines starting with {@code #}
 * are ignored. An unknown key, a key given twice, a line without {@code =} or a bad value is an
 * {@link IllegalArgumentException} naming the key and where it came from. A master resolves all
 * of this once and hands each worker JVM the result as a file ({@link #write}), which the worker
 * reads alone: a worker never re-applies the environment, so a flag given to the master keeps
 * its precedence in the workers.
 *
 * <p>Immutable: {@link #with} returns a new source.
 */
public final class Settings {
    /** Environment variable naming the configuration file when {@code --config} is not given. */
    public static final String FILE_ENV = "BINOMIC_CONFIG";
    /** Environment variable of the broker URL (the {@code broker.url} setting). */
    public static final String BROKER_URL_ENV = "BINOMIC_BROKER_URL";
    /** Prefix of the broker's provider-specific options, such as {@code broker.option.redisson.config}. */
    public static final String OPTION_PREFIX = "broker.option.";

    /** Every setting, in the order the documentation lists them. */
    public static final List<String> KEYS = List.of(
            "broker.url", "broker.id", "broker.username", "broker.password", "broker.database", "broker.connectTimeout",
            "broker.commandTimeout", "broker.keyPrefix", "broker.maxPayloadBytes", "broker.deadLetterMaxCount",
            "broker.deadLetterMaxAge",
            "task.maxAttempts", "task.timeout", "task.backoff.base", "task.backoff.factor", "task.backoff.cap",
            "task.backoff.jitter", "task.staleAfter",
            "worker.queues", "worker.concurrency", "worker.shutdownGrace", "worker.leaseTimeout", "worker.pollTimeout",
            "worker.reclaimInterval",
            "master.workers", "master.heartbeatInterval", "master.heartbeatTimeout", "master.startTimeout",
            "master.killGrace", "master.restartBackoff", "master.restartBackoffMax", "master.stateDir", "master.jvmOptions",
            "master.dashboardPort", "master.dashboardAddress", "master.dashboardToken", "master.dashboardReadOnly");
    private static final Set<String> KNOWN = Set.copyOf(KEYS);
    /** Variables of the launch scripts and the dashboard, not settings: never warned about. */
    public static final Set<String> OTHER_VARIABLES = Set.of("BINOMIC_MODULE_PATH", "BINOMIC_JAVA_OPTS", "BINOMIC_TRAIN_AOT",
            "BINOMIC_AOT_TRAINING_SECONDS", "BINOMIC_DASHBOARD_TOKEN");
    /** The prefix of the system properties of Binomic's own. */
    private static final String PROPERTY_PREFIX = "binomic.";
    /** The {@code binomic.*} system properties Binomic reads; any other is refused. */
    private static final List<String> READ_PROPERTIES = List.of(AotCache.PROPERTY);
    private static final System.Logger LOG = System.getLogger(Settings.class.getName());
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)");
    private static final Pattern OPTION_NAME = Pattern.compile("[A-Za-z0-9_.-]+");
    /** The prefix of the environment variables of broker options: {@code BINOMIC_BROKER_OPTION_}. */
    private static final String OPTION_VARIABLE = envName(OPTION_PREFIX);

    private final Map<String, String> values;
    private final Map<String, String> origins;

    private Settings(Map<String, String> values, Map<String, String> origins) {
        this.values = Collections.unmodifiableMap(values);
        this.origins = Collections.unmodifiableMap(origins);
    }

    /** No setting given: every value is its default. */
    public static Settings defaults() { return new Settings(new LinkedHashMap<>(), new HashMap<>()); }

    /**
     * The file ({@code file}, else the one {@value #FILE_ENV} names, else none) with the
     * environment's {@code BINOMIC_*} variables on top: what the CLI and the master start from.
     *
     * @throws IllegalArgumentException when the file is missing or wrong, or a variable has an unknown option name
     */
    public static Settings load(Optional<Path> file, Map<String, String> env) {
        Map<String, String> properties = new TreeMap<>();
        System.getProperties().stringPropertyNames().forEach(name -> properties.put(name, System.getProperty(name)));
        return load(file, env, properties);
    }

    /**
     * {@link #load(Optional, Map)} with these system properties in place of the JVM's.
     *
     * @throws IllegalArgumentException also when a {@code binomic.*} property is one Binomic does not read
     *         ({@link #unreadProperties})
     */
    public static Settings load(Optional<Path> file, Map<String, String> env, Map<String, String> properties) {
        List<String> unread = unreadProperties(properties);
        if (!unread.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", unread));
        }
        Optional<Path> chosen = file.or(() -> Optional.ofNullable(env.get(FILE_ENV)).filter(f -> !f.isBlank()).map(Path::of));
        Settings settings = chosen.map(Settings::ofFile).orElseGet(Settings::defaults);
        return settings.withEnvironment(env);
    }

    /** The settings of one file and nothing else: what a worker JVM reads. */
    public static Settings ofFile(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("configuration file " + file + " does not exist: give an existing file to --config or "
                    + FILE_ENV, e);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the configuration file " + file + " (" + e.getMessage()
                    + "): give a readable file to --config or " + FILE_ENV, e);
        }
        return parse(text, file.toString());
    }

    /** Parses the text of a configuration file; {@code name} is the file, for messages. */
    static Settings parse(String text, String name) {
        Settings settings = defaults();
        Map<String, Integer> lineOf = new HashMap<>();
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int equals = line.indexOf('=');
            String where = name + " line " + (i + 1);
            if (equals <= 0) {
                throw new IllegalArgumentException(where + ": expected 'key = value', was '" + line + "'");
            }
            String key = line.substring(0, equals).strip();
            Integer first = lineOf.putIfAbsent(key, i + 1);
            if (first != null) {
                throw new IllegalArgumentException(where + ": " + key + " is set twice (first on line " + first + "); keep one");
            }
            settings = settings.with(key, line.substring(equals + 1).strip(), where);
        }
        return settings;
    }

    /**
     * These settings with each {@code BINOMIC_*} variable of {@code env} on top. A {@code BINOMIC_*}
     * variable that is no setting is logged as a warning and ignored, not refused: other tools may
     * set variables of that prefix ({@link #unknownVariables}).
     */
    public Settings withEnvironment(Map<String, String> env) {
        unknownVariables(env).forEach(w -> LOG.log(Level.WARNING, w));
        Settings settings = this;
        for (String key : KEYS) {
            String name = envName(key);
            String value = env.get(name);
            if (value != null && !value.isBlank()) {
                settings = settings.with(key, value.strip(), "environment variable " + name);
            }
        }
        for (Map.Entry<String, String> e : new TreeMap<>(env).entrySet()) {
            if (isOptionVariable(e.getKey())) {
                String option = e.getKey().substring(OPTION_VARIABLE.length()).toLowerCase(Locale.ROOT).replace('_', '.');
                settings = settings.with(OPTION_PREFIX + option, e.getValue().strip(), "environment variable " + e.getKey());
            }
        }
        return settings;
    }

    /**
     * One warning for each {@code BINOMIC_*} variable of {@code env} that is no setting (a
     * mistyped one is otherwise silently ignored), naming the closest setting's variable.
     */
    static List<String> unknownVariables(Map<String, String> env) {
        List<String> known = new ArrayList<>(KEYS.stream().map(Settings::envName).toList());
        known.add(FILE_ENV);
        List<String> warnings = new ArrayList<>();
        for (String name : new TreeMap<>(env).keySet()) {
            if (!name.startsWith("BINOMIC_") || known.contains(name) || OTHER_VARIABLES.contains(name) || isOptionVariable(name)) {
                continue;
            }
            warnings.add("environment variable " + name + " is not a Binomic setting and is ignored" + ClosestName.hint(name, known)
                    + " (a broker option is " + OPTION_VARIABLE + "<NAME>, e.g. " + OPTION_VARIABLE + "EVICTION_ALLOWED; the settings are"
                    + " listed in module-info-docs/configuration.md)");
        }
        return warnings;
    }

    /**
     * One message for each {@code binomic.*} system property of {@code properties} that Binomic does
     * not read, naming the setting's file key, variable and flag where it is one. Refused, unlike an
     * unknown variable: {@code -Dbinomic.broker.url=...} reads as a setting, and ignoring it would
     * point a command at the default broker instead of the one meant, where a write does harm.
     */
    static List<String> unreadProperties(Map<String, String> properties) {
        List<String> problems = new ArrayList<>();
        for (String name : new TreeMap<>(properties).keySet()) {
            if (!name.startsWith(PROPERTY_PREFIX) || READ_PROPERTIES.contains(name)) {
                continue;
            }
            String key = name.substring(PROPERTY_PREFIX.length());
            boolean setting = KNOWN.contains(key) || key.startsWith(OPTION_PREFIX) && OPTION_NAME.matcher(key.substring(OPTION_PREFIX.length())).matches();
            if (setting) {
                problems.add("system property " + name + " is not read: Binomic takes " + key + " from "
                        + (key.equals("broker.url") ? "--broker, " : "") + "the environment variable " + envName(key)
                        + " or a --config file line '" + key + " = VALUE'; remove -D" + name);
            } else {
                List<String> names = new ArrayList<>(READ_PROPERTIES);
                KEYS.forEach(k -> names.add(PROPERTY_PREFIX + k));
                problems.add("system property " + name + " is not read by Binomic" + ClosestName.hint(name, names)
                        + " (the only system property it reads is " + String.join(", ", READ_PROPERTIES)
                        + "; settings go in a --config file, BINOMIC_* variables or flags: module-info-docs/configuration.md); remove -D" + name);
            }
        }
        return problems;
    }

    private static boolean isOptionVariable(String name) { return name.startsWith(OPTION_VARIABLE) && name.length() > OPTION_VARIABLE.length(); }

    /** The environment variable of {@code key}: {@code broker.keyPrefix} is {@code BINOMIC_BROKER_KEY_PREFIX}. */
    public static String envName(String key) {
        return "BINOMIC_" + key.replaceAll("([a-z0-9])([A-Z])", "$1_$2").replace('.', '_').toUpperCase(Locale.ROOT);
    }

    /**
     * These settings with {@code key} set to {@code value}, which wins over what was there.
     *
     * @param origin where the value comes from, for messages ({@code --broker}, a file and line)
     * @throws IllegalArgumentException when the key is not a setting
     */
    public Settings with(String key, String value, String origin) {
        if (!KNOWN.contains(key) && !(key.startsWith(OPTION_PREFIX) && OPTION_NAME.matcher(key.substring(OPTION_PREFIX.length())).matches())) {
            throw new IllegalArgumentException(origin + ": unknown setting '" + key + "'" + ClosestName.hint(key, KEYS)
                    + "; the settings are listed in module-info-docs/configuration.md");
        }
        Map<String, String> v = new LinkedHashMap<>(values);
        Map<String, String> o = new HashMap<>(origins);
        v.put(key, value);
        o.put(key, origin);
        return new Settings(v, o);
    }

    public Optional<String> value(String key) { return Optional.ofNullable(values.get(key)); }

    /** Where the value of {@code key} came from, if anything set it. */
    public Optional<String> origin(String key) { return Optional.ofNullable(origins.get(key)); }

    /** The broker settings; {@code defaultUrl} when no {@code broker.url} is given. */
    public BrokerConfig broker(String defaultUrl) {
        BrokerConfig.Builder b = BrokerConfig.builder().url(value("broker.url").orElse(defaultUrl));
        value("broker.id").ifPresent(b::brokerId);
        value("broker.username").ifPresent(b::username);
        value("broker.password").ifPresent(b::password);
        intValue("broker.database").ifPresent(b::database);
        duration("broker.connectTimeout").ifPresent(b::connectTimeout);
        duration("broker.commandTimeout").ifPresent(b::commandTimeout);
        value("broker.keyPrefix").ifPresent(b::keyPrefix);
        intValue("broker.maxPayloadBytes").ifPresent(b::maxPayloadBytes);
        intValue("broker.deadLetterMaxCount").ifPresent(b::deadLetterMaxCount);
        duration("broker.deadLetterMaxAge").ifPresent(b::deadLetterMaxAge);
        b.options(values.entrySet().stream().filter(e -> e.getKey().startsWith(OPTION_PREFIX))
                .collect(Collectors.toMap(e -> e.getKey().substring(OPTION_PREFIX.length()), Map.Entry::getValue, (a, c) -> c, TreeMap::new)));
        String yaml = OPTION_PREFIX + "redisson.config";
        if (values.containsKey(yaml) && values.containsKey("broker.url") && !source(yaml).equals(source("broker.url"))) {
            // The Redisson file configures the whole connection and would silently win over the URL.
            throw new IllegalArgumentException("broker.url from " + origins.get("broker.url") + " and " + yaml + " from "
                    + origins.get(yaml) + " both say where Redis is, and the Redisson file would win: give one of them"
                    + " (put the server in the Redisson file, or unset " + yaml + ")");
        }
        return build("broker", b::build);
    }

    /**
     * Refuses a file a setting names that does not exist or cannot be read ({@code broker.option.redisson.config}),
     * naming the key and where it came from: the broker would only say, later, that it cannot read the file.
     *
     * @throws IllegalArgumentException naming the key, its origin and the file
     */
    public void requireReadableFiles() {
        String yaml = OPTION_PREFIX + "redisson.config";
        if (values.containsKey(yaml)) {
            Path file = Path.of(values.get(yaml));
            if (!Files.exists(file)) {
                throw new LocatedValueException(where(yaml) + yaml + ": the Redisson file " + file + " does not exist;"
                        + " give an existing file, or unset " + yaml);
            }
            if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
                throw new LocatedValueException(where(yaml) + yaml + ": the Redisson file " + file + " is not a readable file;"
                        + " give a file this user can read, or unset " + yaml);
            }
        }
    }

    /**
     * A broker option the broker refused, in these settings' terms: its {@code broker.option.} key, the
     * closest key it may have meant, and where it came from (a file and line, a variable).
     */
    public String refusedOption(UnknownBrokerOptionException e) {
        List<String> from = e.options().stream().map(option -> OPTION_PREFIX + option)
                .flatMap(key -> origin(key).map(o -> key + " from " + o).stream()).toList();
        return e.describe(OPTION_PREFIX) + (from.isEmpty() ? "" : " (" + String.join("; ", from) + ")");
    }

    /** Where a value came from, without the line: the file, the variable or the option. */
    private String source(String key) {
        String origin = origins.getOrDefault(key, "");
        int line = origin.lastIndexOf(" line ");
        return line < 0 ? origin : origin.substring(0, line);
    }

    public TaskDefaults taskDefaults() {
        TaskDefaults.Builder b = TaskDefaults.builder();
        intValue("task.maxAttempts").ifPresent(b::maxAttempts);
        duration("task.timeout").ifPresent(b::taskTimeout);
        duration("task.staleAfter").ifPresent(b::staleAfter);
        if (values.keySet().stream().anyMatch(k -> k.startsWith("task.backoff."))) {
            // Each part not given keeps the default's (the builder's defaults are Backoff.DEFAULT).
            b.backoff(build("task.backoff", () -> {
                Backoff.Builder backoff = Backoff.builder();
                duration("task.backoff.base").ifPresent(backoff::base);
                doubleValue("task.backoff.factor").ifPresent(backoff::factor);
                duration("task.backoff.cap").ifPresent(backoff::cap);
                doubleValue("task.backoff.jitter").ifPresent(backoff::jitter);
                return backoff.build();
            }));
        }
        return build("task", b::build);
    }

    /** The worker settings (the consumer name is never a setting: each worker has its own). */
    public WorkerConfig worker() {
        WorkerConfig.Builder b = WorkerConfig.builder();
        value("worker.queues").map(text -> list("worker.queues", text)).ifPresent(b::queues);
        intValue("worker.concurrency").ifPresent(b::concurrency);
        duration("worker.shutdownGrace").ifPresent(b::shutdownGrace);
        duration("worker.leaseTimeout").ifPresent(b::leaseTimeout);
        duration("worker.pollTimeout").ifPresent(b::pollTimeout);
        duration("worker.reclaimInterval").ifPresent(b::reclaimInterval);
        return build("worker", b::build);
    }

    /**
     * A master builder with every setting given here but the keys in {@code flagged}, which the caller
     * sets itself from its own options (a builder takes each setting once); {@code defaultUrl} when no
     * {@code broker.url} is given.
     */
    public MasterConfig.Builder master(String defaultUrl, Set<String> flagged) {
        // Each worker key alone, not a built WorkerConfig: a file's value may only be valid together
        // with a flag the caller sets afterwards (a pollTimeout under a longer --lease-timeout).
        MasterConfig.Builder b = MasterConfig.builder().broker(broker(defaultUrl)).taskDefaults(taskDefaults());
        // The builder checks each value as it is set: say which key and where it came from.
        return build("master", () -> {
            unless(flagged, "worker.queues", value("worker.queues").map(text -> list("worker.queues", text))).ifPresent(b::queues);
            unless(flagged, "worker.concurrency", intValue("worker.concurrency")).ifPresent(b::concurrency);
            unless(flagged, "worker.shutdownGrace", duration("worker.shutdownGrace")).ifPresent(b::shutdownGrace);
            unless(flagged, "worker.leaseTimeout", duration("worker.leaseTimeout")).ifPresent(b::leaseTimeout);
            unless(flagged, "worker.pollTimeout", duration("worker.pollTimeout")).ifPresent(b::pollTimeout);
            unless(flagged, "worker.reclaimInterval", duration("worker.reclaimInterval")).ifPresent(b::reclaimInterval);
            unless(flagged, "master.workers", intValue("master.workers")).ifPresent(b::workers);
            unless(flagged, "master.heartbeatInterval", duration("master.heartbeatInterval")).ifPresent(b::heartbeatInterval);
            unless(flagged, "master.heartbeatTimeout", duration("master.heartbeatTimeout")).ifPresent(b::heartbeatTimeout);
            unless(flagged, "master.startTimeout", duration("master.startTimeout")).ifPresent(b::startTimeout);
            unless(flagged, "master.killGrace", duration("master.killGrace")).ifPresent(b::killGrace);
            unless(flagged, "master.restartBackoff", duration("master.restartBackoff")).ifPresent(b::restartBackoffInitial);
            unless(flagged, "master.restartBackoffMax", duration("master.restartBackoffMax")).ifPresent(b::restartBackoffMax);
            unless(flagged, "master.stateDir", value("master.stateDir").map(Path::of)).ifPresent(b::stateDirectory);
            unless(flagged, "master.jvmOptions", value("master.jvmOptions").map(v -> v.isBlank() ? List.<String>of()
                    : List.of(v.split("\\s+")))).ifPresent(b::jvmOptions);
            return b;
        });
    }

    /** {@code value}, read (and so checked) either way, unless the caller sets {@code key} itself. */
    private static <T> Optional<T> unless(Set<String> flagged, String key, Optional<T> value) {
        return flagged.contains(key) ? Optional.empty() : value;
    }

    /** The file text that {@link #ofFile} reads back as exactly these broker, task and worker settings. */
    public static String render(BrokerConfig broker, TaskDefaults tasks, WorkerConfig worker) {
        Map<String, String> v = new LinkedHashMap<>();
        v.put("broker.url", broker.url());
        broker.brokerId().ifPresent(id -> v.put("broker.id", id));
        broker.username().ifPresent(u -> v.put("broker.username", u));
        broker.password().ifPresent(p -> v.put("broker.password", p));
        v.put("broker.database", Integer.toString(broker.database()));
        v.put("broker.connectTimeout", broker.connectTimeout().toString());
        v.put("broker.commandTimeout", broker.commandTimeout().toString());
        v.put("broker.keyPrefix", broker.keyPrefix());
        v.put("broker.maxPayloadBytes", Integer.toString(broker.maxPayloadBytes()));
        v.put("broker.deadLetterMaxCount", Integer.toString(broker.deadLetterMaxCount()));
        v.put("broker.deadLetterMaxAge", broker.deadLetterMaxAge().toString());
        new TreeMap<>(broker.options()).forEach((k, value) -> v.put(OPTION_PREFIX + k, value));
        v.put("task.maxAttempts", Integer.toString(tasks.maxAttempts()));
        v.put("task.timeout", tasks.taskTimeout().toString());
        v.put("task.backoff.base", tasks.backoff().base().toString());
        v.put("task.backoff.factor", Double.toString(tasks.backoff().factor()));
        v.put("task.backoff.cap", tasks.backoff().cap().toString());
        v.put("task.backoff.jitter", Double.toString(tasks.backoff().jitter()));
        tasks.staleAfter().ifPresent(d -> v.put("task.staleAfter", d.toString()));
        if (!worker.queues().isEmpty()) { // none: the tasks' queues, as when the key is left out
            v.put("worker.queues", String.join(",", worker.queues()));
        }
        v.put("worker.concurrency", Integer.toString(worker.concurrency()));
        v.put("worker.shutdownGrace", worker.shutdownGrace().toString());
        v.put("worker.leaseTimeout", worker.leaseTimeout().toString());
        v.put("worker.pollTimeout", worker.pollTimeout().toString());
        v.put("worker.reclaimInterval", worker.reclaimInterval().toString());
        StringBuilder text = new StringBuilder("# Written by the Binomic master for its worker JVMs; resolved settings, do not edit.\n");
        v.forEach((k, value) -> {
            if (value.contains("\n") || value.contains("\r")) {
                throw new IllegalArgumentException(k + " must be one line");
            }
            text.append(k).append(" = ").append(value).append('\n');
        });
        return text.toString();
    }

    /**
     * Writes {@link #render} to {@code file}, readable by its owner only (it may hold the broker
     * password), replacing it atomically so a worker starting meanwhile reads a whole file.
     */
    public static void write(Path file, BrokerConfig broker, TaskDefaults tasks, WorkerConfig worker) {
        try {
            Path dir = file.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            Path temp = Files.createTempFile(dir, file.getFileName().toString(), ".tmp");
            try {
                if (Files.getFileStore(temp).supportsFileAttributeView("posix")) {
                    Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("rw-------"));
                }
                Files.writeString(temp, render(broker, tasks, worker), StandardCharsets.UTF_8);
                Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } finally {
                Files.deleteIfExists(temp);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the worker settings " + file + ": " + e.getMessage(), e);
        }
    }

    private Optional<Integer> intValue(String key) { return number(key, Integer::parseInt, "a whole number"); }

    private Optional<Double> doubleValue(String key) { return number(key, Double::parseDouble, "a number such as 2 or 0.5"); }

    private <T> Optional<T> number(String key, Function<String, T> parse, String expected) {
        return value(key).map(text -> {
            try {
                return parse.apply(text);
            } catch (NumberFormatException e) {
                throw new LocatedValueException(where(key) + key + " must be " + expected + ", was '" + text + "'", e);
            }
        });
    }

    private Optional<Duration> duration(String key) {
        return value(key).map(text -> {
            try {
                return parseDuration(where(key) + key, text);
            } catch (IllegalArgumentException e) {
                throw new LocatedValueException(e.getMessage(), e);
            }
        });
    }

    /** {@code 500ms}, {@code 5s}, {@code 2m}, {@code 1h}, {@code 14d} or ISO-8601 such as {@code PT5S}. */
    public static Duration parseDuration(String what, String text) {
        Matcher m = DURATION.matcher(text.toLowerCase(Locale.ROOT));
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                default -> Duration.ofDays(n);
            };
        }
        if (text.startsWith("-") && DURATION.matcher(text.substring(1).toLowerCase(Locale.ROOT)).matches()) {
            // A duration, but negative: say that, not that it is not a duration.
            throw new IllegalArgumentException(what + " must be positive, was '" + text + "'; give one such as " + text.substring(1));
        }
        try {
            return Duration.parse(text);
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(what + " must be a duration such as 500ms, 5s, 2m, 1h, 14d or PT5S, was '" + text + "'", e);
        }
    }

    /**
     * Comma-separated names. An empty one is refused, not skipped: "a,,b" is a name left out by
     * mistake, and an empty value meant every queue where {@code --queues ''} was refused.
     */
    private List<String> list(String key, String text) {
        List<String> items = new ArrayList<>();
        for (String part : text.split(",", -1)) {
            String item = part.strip();
            if (item.isEmpty()) {
                throw new LocatedValueException(where(key) + key + (text.isBlank() ? " is empty" : " has an empty name in '" + text + "'")
                        + ": list names separated by commas, or leave " + key + " out");
            }
            items.add(item);
        }
        return items;
    }

    private String where(String key) { return origin(key).map(o -> o + ": ").orElse(""); }

    /** Runs a config builder; its message names the field, this adds where the section's values came from. */
    private <T> T build(String section, Supplier<T> builder) {
        try {
            return builder.get();
        } catch (LocatedValueException e) {
            throw e; // names its key and where it came from already
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + originsOf(section), e);
        }
    }

    /** A value that does not parse, its message starting with the key and where it came from. */
    private static final class LocatedValueException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;

        LocatedValueException(String message) { super(message); }

        LocatedValueException(String message, Throwable cause) { super(message, cause); }
    }

    /** " (key from origin, ...)" for every key of {@code section} that was set, or "" when none was. */
    public String originsOf(String section) {
        List<String> from = origins.entrySet().stream().filter(en -> en.getKey().startsWith(section + "."))
                .map(en -> en.getKey() + " from " + en.getValue()).sorted().toList();
        return from.isEmpty() ? "" : " (" + String.join(", ", from) + ")";
    }
}
