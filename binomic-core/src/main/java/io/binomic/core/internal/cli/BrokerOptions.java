package io.binomic.core.internal.cli;

import io.binomic.core.internal.process.Settings;
import java.util.Map;
import java.util.regex.Pattern;

/** The {@code --broker} and {@code --queues} options that several commands share. */
final class BrokerOptions {
    static final String DEFAULT_URL = "redis://localhost:6379";
    /** Only the shape: the broker provider checks the rest and says what is wrong. */
    private static final Pattern URL = Pattern.compile("[A-Za-z][A-Za-z0-9+.-]*://.*");

    static final Option BROKER = Option.value("broker", "URL",
            "broker URL, e.g. redis://user:pass@host:6379/0. Defaults to $" + Settings.BROKER_URL_ENV
                    + ", else broker.url of the --config file, else " + DEFAULT_URL);
    static final Option QUEUES = Option.value("queues", "A,B",
            "comma-separated queues. Defaults to the queues of the tasks found on the module path");

    private BrokerOptions() { }

    /**
     * The broker URL: the option, else the environment variable, else the local Redis. The CLI
     * hands commands an environment in which the variable already holds the configuration file's
     * {@code broker.url} when the real environment has none, so the file's URL comes before the default.
     */
    static String url(Arguments args, Map<String, String> env) throws UsageException {
        String fromEnv = env.get(Settings.BROKER_URL_ENV);
        String url = args.value(BROKER.name()).orElse(fromEnv == null || fromEnv.isBlank() ? DEFAULT_URL : fromEnv);
        if (!URL.matcher(url).matches()) {
            throw new UsageException("--broker must start with a scheme such as redis:// or memory://, was '" + url + "'");
        }
        return url;
    }
}
