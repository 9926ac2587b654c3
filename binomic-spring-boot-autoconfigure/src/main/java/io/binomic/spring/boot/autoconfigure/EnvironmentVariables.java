package io.binomic.spring.boot.autoconfigure;

import io.binomic.core.internal.Providers;
import io.binomic.core.internal.cli.ClosestName;
import io.binomic.core.internal.process.Settings;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The {@code BINOMIC_*} environment variables a Boot application ignores. Spring Boot leaves an unknown property
 * alone when it comes from an environment variable (it checks only the other sources), and the {@code binomic}
 * command spells its variables after its own keys ({@code BINOMIC_TASK_MAX_ATTEMPTS} for {@code task.maxAttempts})
 * where Boot reads {@code BINOMIC_TASKDEFAULTS_MAXATTEMPTS}: a master and a Boot application given one environment
 * would then run with different settings, and a mistyped variable would change nothing, both without a word.
 */
final class EnvironmentVariables {
    private static final String PREFIX = "BINOMIC_";
    private static final String SETTING_OPTION = Settings.envName(Settings.OPTION_PREFIX);
    private static final String BOOT_OPTIONS = "binomic.broker.options.";

    private EnvironmentVariables() { }

    /**
     * One warning for each {@code BINOMIC_*} variable of {@code env} that no property binds: the command's name of a
     * setting, naming the property and variable to set instead; the command's settings file, which Boot does not
     * read; any other, naming the closest property's variable. The variables of the master alone
     * ({@code BINOMIC_MASTER_WORKERS}) and of the launch scripts ({@code BINOMIC_JAVA_OPTS}) are left alone: an
     * environment shared with a master has them for the master. A broker option ({@code BINOMIC_BROKER_OPTION_*}) is
     * checked against {@code options}, those of the application's broker: Boot's variable for a mistyped one would
     * only carry the typo on to a failed start, so the warning names the closest known option's instead.
     */
    static List<String> warnings(Map<String, ?> env, Optional<Providers.KnownOptions> options) {
        Set<String> bound = PropertyNames.environmentVariables();
        Map<String, String> settings = new TreeMap<>();
        Settings.KEYS.forEach(k -> settings.put(Settings.envName(k), k));
        List<String> warnings = new ArrayList<>();
        for (String name : new TreeMap<>(env).keySet()) {
            if (!name.startsWith(PREFIX) || bound.contains(name) || bound.stream().anyMatch(b -> name.startsWith(b + "_"))
                    || Settings.OTHER_VARIABLES.contains(name)) {
                continue;
            }
            String ignored = "environment variable " + name;
            Optional<String> property = settings.containsKey(name) ? PropertyNames.ofSetting(settings.get(name))
                    : name.startsWith(SETTING_OPTION) && name.length() > SETTING_OPTION.length()
                    ? PropertyNames.ofSetting(Settings.OPTION_PREFIX + name.substring(SETTING_OPTION.length()).toLowerCase(Locale.ROOT).replace('_', '.'))
                    : Optional.empty();
            Optional<String> option = property.filter(p -> p.startsWith(BOOT_OPTIONS)).map(p -> p.substring(BOOT_OPTIONS.length()));
            Optional<Providers.KnownOptions> refusing = option.flatMap(o -> options.filter(known -> !known.names().contains(o)));
            if (refusing.isPresent()) {
                Providers.KnownOptions known = refusing.get();
                warnings.add(ignored + " is the binomic command's name of the setting " + Settings.OPTION_PREFIX + option.get() + ", which"
                        + " Spring Boot does not read, and " + option.get() + " is not an option of the " + known.brokerId() + " broker: this"
                        + " application ignores it; " + ClosestName.to(option.get(), known.names())
                                .map(meant -> "did you mean " + meant + "? Set "
                                        + PropertyNames.environmentVariable(BinomicFailureAnalyzer.bootName(meant))
                                        + " (the property " + BinomicFailureAnalyzer.bootName(meant) + ") for it")
                                .orElse("its options are " + String.join(", ", known.names())));
            } else if (property.isPresent()) {
                String key = settings.getOrDefault(name, property.get().replace(BOOT_OPTIONS, Settings.OPTION_PREFIX));
                warnings.add(ignored + " is the binomic command's name of the setting " + key + ", which Spring Boot does not read:"
                        + " this application ignores it; set " + PropertyNames.environmentVariable(property.get()) + " (the property " + property.get()
                        + ") for it, beside the command's variable if a master shares this environment");
            } else if (settings.containsKey(name)) {
                continue; // a setting of the master alone
            } else if (name.equals(Settings.FILE_ENV)) {
                warnings.add(ignored + " names the binomic command's settings file, which Spring Boot does not read: this application"
                        + " ignores it; set the settings it holds as binomic.* properties (spring-boot.md lists them)");
            } else {
                warnings.add(ignored + " is not a binomic.* property Spring Boot reads, and is ignored"
                        + ClosestName.to(name, bound).map(meant -> "; did you mean " + meant + "?").orElse(""));
            }
        }
        return warnings;
    }

}
