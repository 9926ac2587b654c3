package io.binomic.core.internal.cli;

import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.ProviderNotFoundException;
import io.binomic.api.UnsafeBrokerSettingException;
import io.binomic.api.WorkerConfig;
import io.binomic.core.Binomic;
import io.binomic.core.internal.UnknownBrokerOptionException;
import io.binomic.core.internal.process.RedisPingLog;
import io.binomic.core.internal.process.OperatorTerms;
import io.binomic.core.internal.process.Settings;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code binomic} command: starts a master, shows queues and workers, and manages the
 * dead-letter queue. Results go to stdout, messages and progress to stderr.
 *
 * <p>Exit codes scripts can rely on: {@value #EXIT_OK} done, {@value #EXIT_FAILED} the operation
 * failed (broker unreachable, dead letter not found...), {@value #EXIT_USAGE} bad usage (the
 * message and a line naming the command's {@code --help} are printed) or a setting refused (a settings file's value, or a
 * broker server setting Binomic will not run on, such as a Redis that may evict its keys: the
 * message alone, which names the fix).
 *
 * <p>Every command reads the same settings: the file of {@code --config FILE} (accepted anywhere
 * on the command line) or {@code $BINOMIC_CONFIG}, then {@code BINOMIC_*} environment variables,
 * then the command's own options (see {@link Settings}).
 */
public final class BinomicCli {
    /** Held so that its level stays set: java.util.logging keeps its loggers only weakly. */
    private static final Logger REDISSON_LOGGER = Logger.getLogger("org.redisson");
    public static final int EXIT_OK = 0;
    public static final int EXIT_FAILED = 1;
    public static final int EXIT_USAGE = 2;

    /** Opens a started Binomic instance on a broker for the inspection commands; the caller closes it. */
    @FunctionalInterface
    interface Connector {
        Binomic connect(String brokerUrl, List<String> queues);
    }

    static final String CONFIG_OPTION = "--config";
    private static final Pattern SUBMIT_OPTION = Pattern.compile("\\bSubmitOptions\\.([a-z][A-Za-z]*)\\b");

    private final PrintStream out;
    private final PrintStream err;
    private final Map<String, String> env;
    /** The JVM's system properties, for the {@code binomic.*} ones it does not read ({@link Settings#load}). */
    private final Map<String, String> properties;
    /** The environment the commands see: the real one, plus the file's broker URL where the environment has none. */
    private final Map<String, String> commandEnv;
    private final List<Command> commands;
    private Settings settings = Settings.defaults();

    /** @param connector opens a broker for the inspection commands; null for the real one, which uses the settings */
    BinomicCli(PrintStream out, PrintStream err, Map<String, String> env, Map<String, String> properties, Connector connector) {
        this.out = out;
        this.err = err;
        this.env = env;
        this.properties = properties;
        this.commandEnv = new HashMap<>(env);
        Connector connect = connector != null ? connector : (url, queues) -> connect(settings, url, queues);
        Command.Context cx = new Command.Context(out, err, commandEnv, connect, () -> settings);
        this.commands = List.of(new MasterCommand(cx), new QueuesCommand(cx), new DashboardCommand(cx), new WorkersCommand(cx),
                new DlqListCommand(cx), new DlqChangeCommand(cx, DlqChangeCommand.REPLAY), new DlqChangeCommand(cx, DlqChangeCommand.PURGE),
                new JobCommand(cx, JobCommand.SHOW), new JobCommand(cx, JobCommand.CANCEL), new JobCommand(cx, JobCommand.SUBMIT),
                new BatchCommand(cx, BatchCommand.SHOW), new BatchCommand(cx, BatchCommand.CANCEL),
                new WorkflowCommand(cx, WorkflowCommand.SHOW), new WorkflowCommand(cx, WorkflowCommand.CANCEL),
                new QueueCommand(cx, QueueCommand.PAUSE), new QueueCommand(cx, QueueCommand.RESUME), new QueueLimitCommand(cx),
                new QueuePartitionsCommand(cx), new OutboxCommand(cx));
    }

    public static void main(String[] args) {
        List<String> words = new ArrayList<>(Arrays.asList(args));
        configureLogging(words);
        System.exit(run(words.toArray(String[]::new), System.out, System.err));
    }

    /**
     * Sets the log level for the command line {@code words}, and takes {@code --verbose} and {@code -v} out of it. A
     * one-shot command (a listing, a submit, a replay) prints only warnings and errors on stderr, since the INFO lines
     * of the client it starts (Binomic's and Redisson's) say nothing its output does not; {@code --verbose} (or
     * {@code -v}) keeps them. The commands that run until stopped, the master and the dashboard, keep logging their
     * lifecycle at INFO, without Redisson's connection lines, and with settings named as an operator gives them
     * ({@link OperatorTermsFormatter}); no command prints Redisson's ping failures unless {@code --verbose}
     * ({@link RedisPingLog}). A {@code java.util.logging} configuration of the user's own is left alone.
     */
    private static void configureLogging(List<String> words) {
        boolean verbose = words.remove("--verbose") | words.remove("-v");
        Set<String> daemons = Set.of("master", "dashboard");
        boolean daemon = words.stream().filter(w -> !w.startsWith("-")).findFirst().filter(daemons::contains).isPresent();
        boolean configured = System.getProperty("java.util.logging.config.file") != null
                || System.getProperty("java.util.logging.config.class") != null;
        if (!verbose && !daemon && !configured) {
            Logger.getLogger("").setLevel(Level.WARNING);
        } else if (!verbose && !configured) {
            REDISSON_LOGGER.setLevel(Level.WARNING);
        }
        if (!verbose) {
            RedisPingLog.quietUnlessConfigured();
        }
        if (daemon && !configured) {
            OperatorTermsFormatter.install(Logger.getLogger(""));
        }
    }

    /**
     * Runs a command line as {@code main} does, printing to {@code out} and {@code err}, and
     * returns its exit code instead of exiting: for tools and tests that embed the CLI.
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        Map<String, String> properties = new HashMap<>();
        System.getProperties().stringPropertyNames().forEach(name -> properties.put(name, System.getProperty(name)));
        return new BinomicCli(out, err, System.getenv(), properties, null).run(args);
    }

    /**
     * Connects with the application's tasks (for their queue names) and without firing periodic
     * tasks, and without creating any queue (inspecting a mistyped queue name must not create it);
     * every broker setting (key prefix, Redisson file...) from {@code settings}, the URL the command chose.
     */
    static Binomic connect(Settings settings, String brokerUrl, List<String> queues) {
        // The settings already hold the URL of the file and the environment, and stand for the default
        // when they have none (a Redisson file alone names the server): only a different URL came from --broker.
        boolean own = brokerUrl.equals(settings.value("broker.url").orElse(Command.DEFAULT_URL));
        BrokerConfig broker;
        try {
            broker = (own ? settings : settings.with("broker.url", brokerUrl, "--broker")).broker(Command.DEFAULT_URL);
        } catch (IllegalArgumentException e) {
            throw new RefusedSettingException(e.getMessage(), e); // --broker next to a Redisson file of the settings
        }
        BinomicConfig config = BinomicConfig.builder()
                .broker(broker)
                .taskDefaults(settings.taskDefaults())
                .worker(WorkerConfig.builder().queues(queues.isEmpty() ? settings.worker().queues() : queues).build())
                .schedulePeriodicTasks(false)
                .build();
        Binomic binomic;
        try {
            binomic = Binomic.builder().config(config).discoverTasks().prepareQueues(false).build();
        } catch (UnknownBrokerOptionException e) {
            throw new RefusedSettingException(settings.refusedOption(e), e);
        } catch (IllegalArgumentException e) {
            // The broker provider refuses a value of the settings (a malformed URL): a setting to fix.
            throw new RefusedSettingException(String.valueOf(e.getMessage()), e);
        }
        try {
            return binomic.start();
        } catch (RuntimeException e) {
            binomic.close();
            throw e;
        }
    }

    int run(String... args) {
        List<String> words = new ArrayList<>(Arrays.asList(args));
        Optional<Path> configFile;
        try {
            configFile = takeConfigOption(words);
        } catch (UsageException e) {
            err.println("binomic: " + e.getMessage());
            return EXIT_USAGE;
        }
        if (words.isEmpty()) {
            err.println("binomic: no command given");
            err.println();
            printOverview(err);
            return EXIT_USAGE;
        }
        if (words.getFirst().equals("--help") || words.getFirst().equals("-h") || words.getFirst().equals("help")) {
            printOverview(out);
            return EXIT_OK;
        }
        Optional<Command> command = find(words);
        if (command.isEmpty()) {
            return unknownCommand(words);
        }
        Command chosen = command.get();
        List<String> rest = chosen.takeOperands(words.subList(chosen.name.split(" ").length, words.size()));
        if (rest.contains("--help") || rest.contains("-h")) {
            printUsage(chosen, out);
            return EXIT_OK;
        }
        try {
            settings = Settings.load(configFile, env, properties);
            // Every value parsed and checked now, so a bad one is a usage error of any command, not
            // a failure halfway through one.
            settings.master(Command.DEFAULT_URL, Set.of());
            settings.requireReadableFiles();
        } catch (IllegalArgumentException e) {
            // A missing file, an unknown key, a bad value: one line that names it; exit 2 as for a bad option.
            err.println("binomic " + chosen.name + ": " + e.getMessage());
            return EXIT_USAGE;
        }
        if (env.get(Settings.BROKER_URL_ENV) == null || env.get(Settings.BROKER_URL_ENV).isBlank()) {
            settings.value("broker.url").ifPresent(url -> commandEnv.put(Settings.BROKER_URL_ENV, url));
        }
        try {
            return chosen.run(Arguments.parse(rest, chosen.options, chosen::whyNot));
        } catch (UsageException e) {
            err.println("binomic " + chosen.name + ": " + inCliTerms(e.getMessage(), chosen, urlSource(rest)));
            if (e.showUsage()) {
                err.println(helpHint("binomic " + chosen.name, "its options"));
            }
            return EXIT_USAGE;
        } catch (UnsafeBrokerSettingException | RefusedSettingException e) {
            // A setting to change, not a failure to retry: the same exit code as a bad value in a settings file.
            err.println("binomic " + chosen.name + ": " + describe(e, chosen, urlSource(rest)));
            return EXIT_USAGE;
        } catch (ProviderNotFoundException e) {
            // A URL whose scheme no broker here serves is a setting to change: one line that names where it came from.
            err.println("binomic " + chosen.name + ": " + inCliTerms(oneLine(e), chosen, urlSource(rest)) + "; check " + urlSource(rest));
            return EXIT_USAGE;
        } catch (RuntimeException e) {
            // Broker down, bad state directory, provider missing...: the message says what and how to fix it.
            err.println("binomic " + chosen.name + ": " + describe(e, chosen, urlSource(rest)));
            return EXIT_FAILED;
        }
    }

    /** Removes {@code --config FILE} or {@code --config=FILE} from anywhere in {@code words}; empty when absent. */
    private static Optional<Path> takeConfigOption(List<String> words) throws UsageException {
        Optional<Path> file = Optional.empty();
        for (int i = 0; i < words.size(); i++) {
            String word = words.get(i);
            String value;
            if (word.equals(CONFIG_OPTION)) {
                if (i + 1 >= words.size() || words.get(i + 1).startsWith("--")) {
                    throw new UsageException(CONFIG_OPTION + " needs a value (FILE): the path of a settings file");
                }
                value = words.remove(i + 1);
                words.remove(i);
            } else if (word.startsWith(CONFIG_OPTION + "=")) {
                value = word.substring(CONFIG_OPTION.length() + 1);
                words.remove(i);
            } else {
                continue;
            }
            if (file.isPresent()) {
                throw new UsageException(CONFIG_OPTION + " is given more than once: give one settings file");
            }
            file = Optional.of(Path.of(value));
            i--;
        }
        return file;
    }

    /** A missing provider's message on one line: what has no provider, and the providers found. */
    static String oneLine(ProviderNotFoundException e) {
        String first = e.getMessage().lines().findFirst().orElse("").replace(" Providers found:", "");
        return first + " (found: " + (e.found().isEmpty() ? "none" : String.join(", ", e.found().stream().map(String::strip).toList())) + ")";
    }

    /** The failure's message, in the CLI's terms ({@link #inCliTerms}). */
    private static String describe(RuntimeException e, Command command, String urlSource) {
        return e.getMessage() == null ? e.getClass().getName() : inCliTerms(e.getMessage(), command, urlSource);
    }

    /**
     * Where this run's broker URL came from, as a hint names it: {@code --broker} when given, else the
     * {@code broker.url} setting and its origin (a file and line, a variable), else {@code --broker} for the default.
     */
    private String urlSource(List<String> words) {
        if (words.stream().anyMatch(w -> w.equals(Command.BROKER_FLAG) || w.startsWith(Command.BROKER_FLAG + "="))) {
            return Command.BROKER_FLAG;
        }
        return settings.origin("broker.url").map(o -> "broker.url (from " + o + ")").orElse(Command.BROKER_FLAG);
    }

    /**
     * A library message in the terms of the command line: the library's hints name its API (BrokerConfig.url,
     * SubmitOptions.delay), the user here typed --broker and --delay, and sets broker.password in a file or
     * BINOMIC_BROKER_PASSWORD. An option is named only when {@code command} has it; the URL by {@code urlSource}.
     */
    static String inCliTerms(String message, Command command, String urlSource) {
        Matcher m = SUBMIT_OPTION.matcher(message.replace("BrokerConfig.url", urlSource));
        StringBuilder text = new StringBuilder();
        while (m.find()) {
            String flag = m.group(1).replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
            boolean has = command.options.stream().anyMatch(o -> o.name().equals(flag));
            m.appendReplacement(text, Matcher.quoteReplacement(has ? "--" + flag : m.group()));
        }
        return OperatorTerms.inSettingsTerms(m.appendTail(text).toString());
    }

    private Optional<Command> find(List<String> words) {
        return commands.stream().filter(command -> {
            List<String> name = List.of(command.name.split(" "));
            return words.size() >= name.size() && words.subList(0, name.size()).equals(name);
        }).findFirst();
    }

    private int unknownCommand(List<String> words) {
        String first = words.getFirst();
        List<Command> group = commands.stream().filter(c -> c.name.startsWith(first + " ")).toList();
        if (!group.isEmpty()) {
            // "binomic dlq" alone or with an unknown second word: list that group's commands.
            boolean help = words.size() > 1 && (words.get(1).equals("--help") || words.get(1).equals("-h"));
            PrintStream to = help ? out : err;
            if (!help) {
                err.println("binomic " + first + ": " + (words.size() > 1 ? "unknown command '" + words.get(1) + "'"
                        + ClosestName.hint(words.get(1), group.stream().map(c -> c.name.substring(first.length() + 1)).toList())
                        : "say which: " + String.join(", ", group.stream().map(c -> c.name.substring(first.length() + 1)).toList())));
                err.println(helpHint("binomic " + first, "its commands"));
                return EXIT_USAGE;
            }
            to.println("Usage: binomic " + first + " <command> [options]");
            to.println();
            printCommandList(group, to);
            return help ? EXIT_OK : EXIT_USAGE;
        }
        err.println("binomic: unknown command '" + first + "'"
                + ClosestName.hint(first, commands.stream().map(c -> c.name.split(" ")[0]).distinct().toList()));
        err.println(helpHint("binomic", "the commands"));
        return EXIT_USAGE;
    }

    /**
     * The line after a usage error's message: where the help is. The whole usage would push the one line
     * that says what is wrong off the top of a terminal, and into the middle of a script's log.
     */
    static String helpHint(String command, String what) {
        return "Run '" + command + " --help' for " + what + ".";
    }

    private void printOverview(PrintStream to) {
        to.println("Usage: binomic <command> [options]");
        to.println();
        to.println("Commands:");
        printCommandList(commands, to);
        to.println();
        to.println("Global option: --config FILE, a settings file (default $" + Settings.FILE_ENV + "); BINOMIC_* environment");
        to.println("variables override it, and a command's options override both. --verbose (-v): INFO lines on stderr too.");
        to.println("Run 'binomic <command> --help' for a command's options.");
        to.println("Exit codes: 0 done, 1 the operation failed, 2 bad usage or a refused setting.");
    }

    private static void printCommandList(List<Command> list, PrintStream to) {
        int width = list.stream().mapToInt(c -> c.name.length()).max().orElse(0);
        list.forEach(command -> to.println("  " + command.name + " ".repeat(width - command.name.length() + 3) + command.summary));
    }

    static void printUsage(Command command, PrintStream to) {
        to.println("Usage: binomic " + command.name + " [options]");
        to.println(command.summary + ".");
        to.println();
        to.println("Options:");
        List<Option> all = new ArrayList<>(command.options);
        all.add(Option.flag("help", "show this help"));
        int width = all.stream().mapToInt(o -> o.synopsis().length()).max().orElse(0);
        for (Option option : all) {
            to.println("  " + option.synopsis() + " ".repeat(width - option.synopsis().length() + 3) + option.description()
                    + (option.repeatable() ? " (repeatable)" : ""));
        }
        if (!command.notes.isEmpty()) {
            to.println();
            to.println(command.notes.stripTrailing());
        }
    }
}
