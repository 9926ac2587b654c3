package io.binomic.core.internal.process;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Messages of the Java API in the terms of an operator who sets keys, variables and flags, not
 * builders: the config builders name their fields ({@code BrokerConfig.password}, {@code leaseTimeout}),
 * the daemons' log lines and the CLI's errors name the settings that give them.
 */
public final class OperatorTerms {
    private static final Pattern API_SETTING = Pattern.compile("\\b(BrokerConfig|WorkerConfig)\\.([a-z][A-Za-z]*)\\b");
    /** A broker option as the Redis broker's messages name it: "BrokerConfig option tls.truststore". */
    private static final Pattern API_OPTION = Pattern.compile("\\bBrokerConfig option ([a-z][A-Za-z0-9]*(?:\\.[a-z][A-Za-z0-9]*)*)");

    private OperatorTerms() {}

    /**
     * {@code message} with the Java API's names of settings in the settings' own: "check BrokerConfig.password"
     * is "check broker.password (BINOMIC_BROKER_PASSWORD)", and "BrokerConfig option tls.truststore" is
     * "broker.option.tls.truststore (BINOMIC_BROKER_OPTION_TLS_TRUSTSTORE)", for an operator who sets keys and
     * variables, not builders. A name that is no setting stays as it is.
     */
    public static String inSettingsTerms(String message) {
        Matcher option = API_OPTION.matcher(message);
        StringBuilder options = new StringBuilder();
        while (option.find()) {
            String key = Settings.OPTION_PREFIX + option.group(1);
            option.appendReplacement(options, Matcher.quoteReplacement(key + " (" + Settings.envName(key) + ")"));
        }
        Matcher m = API_SETTING.matcher(option.appendTail(options).toString());
        StringBuilder text = new StringBuilder();
        while (m.find()) {
            String key = (m.group(1).equals("BrokerConfig") ? "broker." : "worker.") + m.group(2);
            m.appendReplacement(text, Matcher.quoteReplacement(Settings.KEYS.contains(key) ? key + " (" + Settings.envName(key) + ")" : m.group()));
        }
        return m.appendTail(text).toString();
    }

    /**
     * {@code message} in the terms of an operator who runs a master or a dashboard from a shell: the broker's
     * URL as the flag or the setting that gives it ("check --broker or broker.url (BINOMIC_BROKER_URL)"),
     * every other API setting as {@link #inSettingsTerms} names it. What a worker's start-up line and the
     * daemons' own log lines say.
     */
    public static String inOperatorTerms(String message) {
        return inSettingsTerms(message.replace("BrokerConfig.url", "--broker or BrokerConfig.url"));
    }

    /** The setting of each {@link MasterConfig} field whose name its builder's messages use. */
    private static final Map<String, String> KEY_OF_FIELD = Map.ofEntries(Map.entry("queues", "worker.queues"),
            Map.entry("concurrency", "worker.concurrency"), Map.entry("shutdownGrace", "worker.shutdownGrace"),
            Map.entry("leaseTimeout", "worker.leaseTimeout"), Map.entry("pollTimeout", "worker.pollTimeout"),
            Map.entry("reclaimInterval", "worker.reclaimInterval"), Map.entry("workers", "master.workers"),
            Map.entry("heartbeatInterval", "master.heartbeatInterval"), Map.entry("heartbeatTimeout", "master.heartbeatTimeout"),
            Map.entry("startTimeout", "master.startTimeout"), Map.entry("killGrace", "master.killGrace"),
            Map.entry("restartBackoffInitial", "master.restartBackoff"), Map.entry("restartBackoffMax", "master.restartBackoffMax"),
            Map.entry("stateDirectory", "master.stateDir"), Map.entry("jvmOptions", "master.jvmOptions"));

    /**
     * The settings whose {@link MasterConfig} fields a message of its builder names ("leaseTimeout must be longer
     * than pollTimeout..." names {@code worker.leaseTimeout} and {@code worker.pollTimeout}), in key order: what
     * a caller adds with where each came from, since the builder knows fields, not keys.
     */
    public static List<String> keysNamedIn(String message) {
        return KEY_OF_FIELD.entrySet().stream().filter(e -> Pattern.compile("\\b" + e.getKey() + "\\b").matcher(message).find())
                .map(Map.Entry::getValue).sorted().toList();
    }
}
