package io.binomic.spring.boot3;

import static org.assertj.core.api.Assertions.assertThat;

import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.core.Binomic;
import io.binomic.core.Dashboard;
import io.binomic.micrometer.BinomicMeterBinder;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.actuate.health.HealthContributorRegistry;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The starter in a Spring Boot 3.5 application: the client, its worker and the meters are
 * auto-configured and run jobs, the dashboard serves; the health indicator is not there, since it is written against
 * Boot 4's {@code org.springframework.boot.health} package.
 */
@SpringBootTest(properties = {"binomic.broker.url=memory://", "binomic.worker.poll-timeout=100ms", "binomic.dashboard.enabled=true",
        "binomic.dashboard.port=0"})
class Boot35StarterTest {
    static final Task<String, String> ECHO = Task.builder("echo", String.class, String.class).build();

    @SpringBootApplication
    static class Application {
        @Bean
        TaskBinding<String, String> echo() {
            return ECHO.handledBy(s -> "echo " + s);
        }
    }

    @Autowired ApplicationContext context;
    @Autowired Binomic binomic;
    @Autowired MeterRegistry registry;
    @Autowired HealthContributorRegistry health;
    @Autowired Dashboard dashboard;

    @Test
    void theClientWorkerMetersAndDashboardWorkOnBoot35ButNotTheHealthIndicator() throws Exception {
        assertThat(SpringBootVersion.getVersion()).startsWith("3.5.");
        assertThat(binomic.submit(ECHO, "x").await(Duration.ofSeconds(20))).isEqualTo("echo x");
        assertThat(context.getBeanNamesForType(BinomicMeterBinder.class)).hasSize(1);
        assertThat(registry.find("binomic.task.duration").tag("task", "echo").timer().count()).isEqualTo(1);
        HttpResponse<String> metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(dashboard.uri().resolve("metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.body()).contains("binomic_tasks_total{");
        assertThat(health.getContributor("ping")).as("Boot 3.5's own health contributors are there").isNotNull();
        assertThat(health.getContributor("binomic")).as("the binomic health indicator needs Boot 4").isNull();
    }
}
