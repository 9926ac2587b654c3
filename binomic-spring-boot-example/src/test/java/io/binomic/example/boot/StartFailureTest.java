package io.binomic.example.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;

/** What a Boot application that cannot start because of Binomic's settings reports: the property to change. */
@ExtendWith(OutputCaptureExtension.class)
class StartFailureTest {

    /** Starts the example with {@code properties} as command-line arguments, which win over its application.yml. */
    private static RuntimeException startFailure(String... properties) {
        return startFailure(new StandardEnvironment(), properties);
    }

    /** {@link #startFailure(String...)} in {@code environment}, for its environment variables. */
    private static RuntimeException startFailure(StandardEnvironment environment, String... properties) {
        String[] args = Stream.concat(Stream.of("--server.port=0"), Arrays.stream(properties).map(p -> "--" + p))
                .toArray(String[]::new);
        try (ConfigurableApplicationContext started = new SpringApplicationBuilder(GreetingApplication.class).environment(environment)
                .run(args)) {
            return fail("the application started with " + List.of(properties) + ": " + started);
        } catch (RuntimeException e) {
            return e;
        }
    }

    /** Spring Boot's report of the failure, from its banner on. */
    private static String report(CapturedOutput output) {
        String all = output.toString();
        int start = all.indexOf("APPLICATION FAILED TO START");
        assertThat(start).as("the report in:%n%s", all).isNotNegative();
        return all.substring(start);
    }

    @Test
    void anUnreachableBrokerFailsTheStartNamingTheSpringProperty(CapturedOutput output) {
        startFailure("binomic.broker.url=redis://127.0.0.1:1");
        assertThat(report(output)).contains("cannot connect to Redis at 127.0.0.1:1")
                .contains("check binomic.broker.url")
                .contains("Action:")
                .contains("point binomic.broker.url at one that runs")
                .doesNotContain("BrokerConfig.url");
    }

    /** Found by an outside tester: port 99999 was reported as a connection failure, "is redis-server running?". */
    @Test
    void aPortThatIsNoPortFailsTheStartAsAnInvalidUrl(CapturedOutput output) {
        startFailure("binomic.broker.url=redis://127.0.0.1:99999");
        assertThat(report(output)).contains("binomic.broker.url 'redis://127.0.0.1:99999' has port 99999, which is not a port (1-65535)")
                .contains("Correct binomic.broker.url")
                .doesNotContain("is redis-server running").doesNotContain("at one that runs");
    }

    @Test
    void anInvalidValueFailsTheStartNamingTheProperty(CapturedOutput output) {
        startFailure("binomic.broker.url=memory://", "binomic.task-defaults.backoff.jitter=2");
        assertThat(report(output)).contains("binomic.task-defaults.backoff.jitter must be in [0, 1], was 2.0")
                .contains("Correct binomic.task-defaults.backoff.jitter");
    }

    @Test
    void aMistypedBrokerOptionFailsTheStartNamingTheKnownOnes(CapturedOutput output) {
        startFailure("binomic.broker.url=redis://127.0.0.1:1", "binomic.broker.options.eviction.alowed=true");
        assertThat(report(output)).contains("binomic.broker.options.eviction.alowed is not an option of the redis broker; did you mean"
                        + " 'binomic.broker.options.eviction.allowed'? Its options are binomic.broker.options.eviction.allowed,"
                        + " binomic.broker.options.eviction.recheck, binomic.broker.options.priority.fairness,")
                .contains("(binomic.broker.options.eviction.alowed from \"binomic.broker.options.eviction.alowed\" from property source"
                        + " \"commandLineArgs\")")
                .contains("Correct binomic.broker.options.eviction.alowed");
    }

    /**
     * Found by an outside tester: of two mistyped options only the first was reported, and the list offered
     * binomic.broker.options.redisson.config where spring-boot.md says to set binomic.broker.redisson-config.
     */
    @Test
    void everyMistypedBrokerOptionIsNamedInOneReport(CapturedOutput output) {
        StandardEnvironment environment = new StandardEnvironment() {
            @Override
            public Map<String, Object> getSystemEnvironment() {
                return Map.of("BINOMIC_BROKER_OPTIONS_WAIT_TIMOUT", "1s");
            }
        };
        startFailure(environment, "binomic.broker.url=redis://127.0.0.1:1", "binomic.broker.options.eviction-allowed=true");
        assertThat(report(output)).contains("binomic.broker.options.wait.timout (did you mean 'binomic.broker.options.wait.timeout'?)")
                .contains("binomic.broker.options.eviction-allowed (did you mean 'binomic.broker.options.eviction.allowed'?)")
                .contains(" are not options of the redis broker; its options are ")
                .contains("binomic.broker.redisson-config")
                .doesNotContain("binomic.broker.options.redisson.config")
                .contains("binomic.broker.options.wait.timout from System Environment Property \"BINOMIC_BROKER_OPTIONS_WAIT_TIMOUT\"")
                .contains("binomic.broker.options.eviction-allowed from \"binomic.broker.options.eviction-allowed\" from property source"
                        + " \"commandLineArgs\"")
                .containsAnyOf("Correct binomic.broker.options.wait.timout and binomic.broker.options.eviction-allowed",
                        "Correct binomic.broker.options.eviction-allowed and binomic.broker.options.wait.timout");
    }

    /** Set by Boot's environment variable: the report names the variable, where the user has to correct it. */
    @Test
    void aMistypedBrokerOptionFromAnEnvironmentVariableNamesTheVariable(CapturedOutput output) {
        StandardEnvironment environment = new StandardEnvironment() {
            @Override
            public Map<String, Object> getSystemEnvironment() {
                return Map.of("BINOMIC_BROKER_OPTIONS_EVICTION_ALOWED", "true");
            }
        };
        startFailure(environment, "binomic.broker.url=redis://127.0.0.1:1");
        assertThat(report(output)).contains("binomic.broker.options.eviction.alowed is not an option of the redis broker; did you mean"
                        + " 'binomic.broker.options.eviction.allowed'?")
                .contains("(binomic.broker.options.eviction.alowed from System Environment Property"
                        + " \"BINOMIC_BROKER_OPTIONS_EVICTION_ALOWED\")");
    }

    @Test
    void aMistypedPropertyFailsTheStart(CapturedOutput output) {
        startFailure("binomic.broker.url=memory://", "binomic.worker.concurency=8");
        assertThat(report(output)).contains("binomic.worker.concurency (")
                .contains("is not a Binomic property; did you mean binomic.worker.concurrency?")
                .contains("Correct binomic.worker.concurency");
    }

    /** A codec no module provides: a missing provider, not an invalid value, and still the property to change. */
    @Test
    void anUnknownPayloadCodecFailsTheStartNamingTheProperty(CapturedOutput output) {
        startFailure("binomic.broker.url=memory://", "binomic.payload-codec=protobuf");
        assertThat(report(output)).contains("no payload codec with id 'protobuf' (binomic.payload-codec)")
                .contains("Correct binomic.payload-codec (see")
                .doesNotContain("BinomicConfig.payloadCodec");
    }

    /** A value Spring cannot convert: the property, the value and where it came from, and the format expected. */
    @Test
    void aValueThatIsNoDurationFailsTheStartNamingThePropertyAndTheFormat(CapturedOutput output) {
        startFailure("binomic.broker.url=memory://", "binomic.worker.shutdown-grace=abc");
        String report = report(output);
        String description = report.substring(report.indexOf("Description:"), report.indexOf("Action:"));
        assertThat(description).contains("binomic.worker.shutdown-grace").contains("'abc'").contains("is not a valid duration");
        assertThat(report.substring(report.indexOf("Action:"))).contains("binomic.worker.shutdown-grace")
                .contains("a duration").contains("10s");
    }

    /** Two settings that do not fit together: both are named as properties, in the description and the action. */
    @Test
    void settingsThatDoNotFitTogetherFailTheStartNamingBothProperties(CapturedOutput output) {
        startFailure("binomic.broker.url=memory://", "binomic.worker.lease-timeout=1s", "binomic.worker.poll-timeout=2s");
        assertThat(report(output)).contains("binomic.worker.poll-timeout (PT2S) must be shorter than binomic.worker.lease-timeout (PT1S)")
                .contains("Correct binomic.worker.poll-timeout or binomic.worker.lease-timeout")
                .doesNotContain("pollTimeout").doesNotContain("leaseTimeout");
    }
}
