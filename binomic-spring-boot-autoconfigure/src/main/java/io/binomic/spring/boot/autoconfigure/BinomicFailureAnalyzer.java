package io.binomic.spring.boot.autoconfigure;

import io.binomic.api.BinomicException;
import io.binomic.api.BrokerException;
import io.binomic.core.internal.UnknownBrokerOptionException;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Reports a start that Binomic's configuration or broker connection failed ("APPLICATION FAILED TO
 * START") in the terms of the application's settings: the builders' and the broker's messages name
 * the builder fields ({@code BrokerConfig.url}, {@code concurrency}, {@code backoff.jitter}, the
 * {@code BrokerConfig option eviction.allowed}), which a Boot application sets as {@code binomic.*}
 * properties, so those names become the properties ({@link PropertyNames}), and the action names the
 * properties to change. A {@code binomic.*} value Spring cannot convert is reported with the property,
 * the value, where it came from and the format expected. A {@code binomic.*} property that is none of
 * Binomic's gets the closest one as a "did you mean", before Spring Boot's own report of unbound
 * properties, which lists the name alone. Registered in {@code META-INF/spring.factories}.
 */
public class BinomicFailureAnalyzer implements FailureAnalyzer, Ordered {
    /** The beans whose creation applies the configuration and connects the broker. */
    private static final Set<String> BEANS = Set.of("binomicConfig", "binomic", "binomicWorkerLifecycle", "binomicTestMode",
            "binomicDashboard");
    /** A property's name; not one inside a Java name ({@code io.binomic.redis.internal}). */
    private static final Pattern PROPERTY = Pattern.compile("(?<![\\w.])binomic\\.[\\w.-]+\\w");
    private static final String SEE = " (see the binomic.* properties in spring-boot.md).";
    /** What a value of each type of the properties looks like. */
    private static final Map<Class<?>, String> FORMATS = Map.of(
            Duration.class, "a duration: a number and a unit, such as 10s, 500ms, 1m or 14d (a bare number is milliseconds),"
                    + " or ISO-8601 such as PT10S",
            int.class, "a whole number, such as 5", Integer.class, "a whole number, such as 5",
            long.class, "a whole number, such as 5", double.class, "a number, such as 0.2",
            boolean.class, "true or false", List.class, "a comma-separated list, such as mail,audit");

    private static final String BOOT_OPTIONS = "binomic.broker.options.";
    /** The broker's hint when nothing answered at the address: the only case where starting the broker is the fix. */
    private static final String NOT_RUNNING = "is redis-server running?";

    /** Where the properties came from: null when the start failed before the application had an environment. */
    private final Environment environment;

    /** Spring Boot gives the application's environment ({@code FailureAnalyzers}), for the origin of a property. */
    public BinomicFailureAnalyzer(Environment environment) {
        this.environment = environment;
    }

    @Override
    public int getOrder() { return Ordered.HIGHEST_PRECEDENCE; }

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof UnboundConfigurationPropertiesException unbound) {
                return unknownProperties(unbound);
            }
            if (t instanceof BindException bind && bind.getName().toString().startsWith("binomic.")) {
                return notConverted(bind);
            }
        }
        Optional<Throwable> cause = binomicCause(failure);
        if (cause.isEmpty()) {
            return null;
        }
        if (cause.get() instanceof UnknownBrokerOptionException refused) {
            return unknownOption(refused);
        }
        String description = PropertyNames.inPropertyNames(String.valueOf(cause.get().getMessage()));
        Set<String> named = new LinkedHashSet<>();
        Matcher m = PROPERTY.matcher(description);
        while (m.find()) {
            if (PropertyNames.isProperty(m.group())) {
                named.add(m.group());
            }
        }
        String action;
        String hint = description.substring(description.lastIndexOf("; ") + 2);
        if (cause.get() instanceof BrokerException && description.contains(NOT_RUNNING)) {
            action = "Binomic connects to its broker while the application starts: start the broker, or point binomic.broker.url"
                    + " at one that runs.";
        } else if (cause.get() instanceof BrokerException && named.stream().anyMatch(hint::contains)) {
            // The broker answered (or was reached): its own hint says which property to change and how.
            action = "Binomic connects to its broker while the application starts: " + hint + ".";
        } else if (!named.isEmpty()) {
            action = "Correct " + String.join(" or ", named) + SEE;
        } else {
            action = "Do as the description says; the binomic.* properties are listed in spring-boot.md.";
        }
        return new FailureAnalysis(description, action, cause.get());
    }

    /**
     * An option the broker does not read, with every option named as the full property: the short name
     * ({@code eviction.allowed}) is no property to set. Its origin tells an environment variable from a file.
     */
    private FailureAnalysis unknownOption(UnknownBrokerOptionException refused) {
        List<String> properties = refused.options().stream().map(o -> BOOT_OPTIONS + o).toList();
        List<String> from = properties.stream().flatMap(p -> origin(p).map(o -> p + " from " + o).stream()).toList();
        String description = refused.describe(BOOT_OPTIONS, BinomicFailureAnalyzer::bootName)
                + (from.isEmpty() ? "" : " (" + String.join("; ", from) + ")");
        return new FailureAnalysis(description, "Correct " + String.join(" and ", properties) + SEE, refused);
    }

    /** A broker option as a Boot user sets it: one with a property of its own by that property, which spring-boot.md tells to use. */
    static String bootName(String option) {
        return option.equals(BinomicConfigs.REDISSON_CONFIG) ? "binomic.broker.redisson-config" : BOOT_OPTIONS + option;
    }

    /** Where {@code property}'s value came from ({@code System Environment Property "BINOMIC_..."}), as Spring Boot says it. */
    private Optional<String> origin(String property) {
        if (environment == null) {
            return Optional.empty();
        }
        ConfigurationPropertyName name = ConfigurationPropertyName.of(property);
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            ConfigurationProperty found = source.getConfigurationProperty(name);
            if (found != null) {
                return Optional.ofNullable(found.getOrigin()).map(Object::toString);
            }
        }
        return Optional.empty();
    }

    /** Each {@code binomic.*} name that is not a property, with the closest property; null when none is Binomic's. */
    private static FailureAnalysis unknownProperties(UnboundConfigurationPropertiesException unbound) {
        StringBuilder description = new StringBuilder();
        String first = null;
        for (ConfigurationProperty p : unbound.getUnboundProperties()) {
            String name = p.getName().toString();
            if (!name.startsWith("binomic.")) {
                continue;
            }
            first = first == null ? name : first;
            description.append(description.isEmpty() ? "" : "\n").append(name).append(" (").append(p.getOrigin())
                    .append(") is not a Binomic property").append(PropertyNames.closest(name).map(c -> "; did you mean " + c + "?").orElse(""));
        }
        return first == null ? null : new FailureAnalysis(description.toString(), "Correct " + first + SEE, unbound);
    }

    /**
     * A value Spring could not turn into the property's type: Spring's reason ({@code 'abc' is not a valid duration})
     * says neither the property nor what it expects.
     */
    private static FailureAnalysis notConverted(BindException bind) {
        String name = bind.getName().toString();
        ConfigurationProperty property = bind.getProperty();
        Throwable root = bind;
        while (root.getCause() != null) {
            root = root.getCause();
        }
        Class<?> type = bind.getTarget().getType().resolve(Object.class);
        String expected = FORMATS.entrySet().stream().filter(e -> e.getKey().isAssignableFrom(type)).map(Map.Entry::getValue)
                .findFirst().orElse("a " + type.getSimpleName());
        String value = property == null ? "" : " = '" + property.getValue() + "'"
                + (property.getOrigin() == null ? "" : " (" + property.getOrigin() + ")");
        String reason = root == bind ? bind.getMessage() : root.getMessage() == null ? root.getClass().getName() : root.getMessage();
        return new FailureAnalysis(name + value + " is not valid: " + reason,
                "Set " + name + " to " + expected + SEE, bind);
    }

    /**
     * A broker failure, or the deepest cause of a failure creating one of Binomic's beans when it is an invalid
     * value ({@link IllegalArgumentException}) or one of Binomic's own ({@link BinomicException}: a codec or broker
     * that no module provides is a setting to change too).
     */
    private static Optional<Throwable> binomicCause(Throwable failure) {
        boolean ours = false;
        Throwable outermost = null;
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof BrokerException) {
                return Optional.of(t);
            }
            ours |= t instanceof BeanCreationException b && BEANS.contains(b.getBeanName());
            // The outermost of the innermost run of ours: a bean that rethrows a refusal in its properties' names wraps it.
            outermost = t instanceof IllegalArgumentException || t instanceof BinomicException ? (outermost == null ? t : outermost) : null;
        }
        return ours ? Optional.ofNullable(outermost) : Optional.empty();
    }

}
