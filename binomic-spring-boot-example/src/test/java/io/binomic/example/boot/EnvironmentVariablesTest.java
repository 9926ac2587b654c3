package io.binomic.example.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.binomic.api.BinomicConfig;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.StandardEnvironment;

/**
 * One environment shared by a master and the Boot application: the binomic command's variables, which Spring Boot
 * does not bind, are each warned of with the property to set, as a mistyped variable is.
 */
@ExtendWith(OutputCaptureExtension.class)
class EnvironmentVariablesTest {

    @Test
    void theCommandsVariablesAndMistypedOnesAreWarnedOfNamingThePropertyToSet(CapturedOutput output) {
        Map<String, Object> env = new HashMap<>(Map.of("BINOMIC_TASK_MAX_ATTEMPTS", "7", "BINOMIC_BROKER_KEY_PREFIX", "shop", "BINOMIC_BROKER_ID", "memory",
                "BINOMIC_BROKER_OPTION_PRIORITY_FAIRNESS", "4", "BINOMIC_CONFIG", "/etc/binomic/binomic.conf",
                "BINOMIC_WORKER_CONCURENCY", "3", "BINOMIC_WORKER_CONCURRENCY", "4", "BINOMIC_MASTER_WORKERS", "2",
                "BINOMIC_JAVA_OPTS", "-Xmx1g", "BINOMIC_SOMETHING_ELSE", "x"));
        env.put("BINOMIC_BROKER_OPTION_PRIORITY_FAIRNES", "2");
        StandardEnvironment environment = new StandardEnvironment() {
            @Override
            public Map<String, Object> getSystemEnvironment() {
                return env;
            }
        };
        try (ConfigurableApplicationContext context = new SpringApplicationBuilder(GreetingApplication.class).environment(environment)
                .run("--server.port=0", "--binomic.broker.url=memory://")) {
            BinomicConfig config = context.getBean(BinomicConfig.class);
            assertThat(config.taskDefaults().maxAttempts()).as("application.yml's: Boot does not read the command's variable").isEqualTo(5);
            assertThat(config.broker().keyPrefix()).as("Boot reads a dash as _ too").isEqualTo("shop");
            assertThat(config.worker().concurrency()).as("a variable both read alike").isEqualTo(4);
        }
        assertThat(output.toString())
                .contains("environment variable BINOMIC_TASK_MAX_ATTEMPTS is the binomic command's name of the setting task.maxAttempts,"
                        + " which Spring Boot does not read: this application ignores it; set BINOMIC_TASKDEFAULTS_MAXATTEMPTS"
                        + " (the property binomic.task-defaults.max-attempts)")
                .contains("environment variable BINOMIC_BROKER_ID is the binomic command's name of the setting broker.id")
                .contains("set BINOMIC_BROKER_BROKERID (the property binomic.broker.broker-id)")
                .contains("BINOMIC_BROKER_OPTION_PRIORITY_FAIRNESS is the binomic command's name of the setting"
                        + " broker.option.priority.fairness")
                .contains("set BINOMIC_BROKER_OPTIONS_PRIORITY_FAIRNESS (the property binomic.broker.options.priority.fairness)")
                .contains("environment variable BINOMIC_BROKER_OPTION_PRIORITY_FAIRNES is the binomic command's name of the setting"
                        + " broker.option.priority.fairnes, which Spring Boot does not read, and priority.fairnes is not an option of the"
                        + " memory broker: this application ignores it; did you mean priority.fairness? Set"
                        + " BINOMIC_BROKER_OPTIONS_PRIORITY_FAIRNESS (the property binomic.broker.options.priority.fairness) for it")
                .doesNotContain("BINOMIC_BROKER_OPTIONS_PRIORITY_FAIRNES ")
                .contains("environment variable BINOMIC_CONFIG names the binomic command's settings file, which Spring Boot does not read")
                .contains("environment variable BINOMIC_WORKER_CONCURENCY is not a binomic.* property Spring Boot reads, and is ignored;"
                        + " did you mean BINOMIC_WORKER_CONCURRENCY?")
                .contains("environment variable BINOMIC_SOMETHING_ELSE is not a binomic.* property Spring Boot reads, and is ignored")
                .doesNotContain("variable BINOMIC_WORKER_CONCURRENCY ").doesNotContain("BINOMIC_MASTER_WORKERS")
                .doesNotContain("BINOMIC_JAVA_OPTS").doesNotContain("BINOMIC_BROKER_KEY_PREFIX");
    }
}
