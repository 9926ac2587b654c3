package io.binomic.example.boot;

import io.binomic.testsupport.RedisProcess;
import static org.assertj.core.api.Assertions.assertThat;

import io.binomic.core.Binomic;
import io.binomic.core.Dashboard;
import io.binomic.example.boot.Greetings.Greeting;
import io.binomic.spring.boot.autoconfigure.BinomicWorkerLifecycle;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The example application on a real redis-server: the starter's client, worker, health, meters and dashboard. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class GreetingApplicationTest {
    private static final RedisProcess REDIS = RedisProcess.start();
    private static final HttpClient HTTP = HttpClient.newHttpClient();
    /** The binomic component of /actuator/health: consuming, with its details. */
    static final String BINOMIC_UP_CONSUMING = "\"binomic\":\\{\"details\":\\{\"state\":\"CONSUMING\"[^}]*},\"status\":\"UP\"";

    @LocalServerPort int port;
    @Autowired Binomic binomic;
    @Autowired Dashboard dashboard;
    @Autowired BinomicWorkerLifecycle lifecycle;
    @Autowired ApplicationContext context;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("binomic.broker.url", REDIS::url);
        registry.add("binomic.worker.poll-timeout", () -> "200ms");
        registry.add("binomic.dashboard.enabled", () -> "true");
        registry.add("binomic.dashboard.port", () -> "0");
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    private String get(String path) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Test
    void theWorkerDrainsAfterTheWebServerStopsTakingRequestsAndBeforeItStops() {
        int gracefulShutdown = context.getBean("webServerGracefulShutdown", SmartLifecycle.class).getPhase();
        int webServerStop = context.getBean("webServerStartStop", SmartLifecycle.class).getPhase();
        // Stopping goes from the highest phase down.
        assertThat(lifecycle.getPhase()).isLessThan(gracefulShutdown).isGreaterThan(webServerStop);
    }

    @Test
    void theStartersClientRunsTheHandlerBeanOnRedis() {
        assertThat(binomic.config().broker().url()).isEqualTo(REDIS.url());
        assertThat(binomic.config().broker().keyPrefix()).isEqualTo("example");
        assertThat(binomic.submit(Greetings.GREET, new Greeting("Ada", 0)).await(Duration.ofSeconds(20))).isEqualTo("Hello Ada");
    }

    @Test
    void theDashboardServesItsPagesAndMetricsOnItsOwnLoopbackPort() throws Exception {
        assertThat(dashboard.address().getAddress().isLoopbackAddress()).isTrue();
        assertThat(dashboard.address().getPort()).isNotEqualTo(port);
        binomic.submit(Greetings.GREET, new Greeting("Edsger", 0)).await(Duration.ofSeconds(20));

        HttpResponse<String> queues = HTTP.send(HttpRequest.newBuilder(dashboard.uri().resolve("queues")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(queues.statusCode()).isEqualTo(200);
        assertThat(queues.body()).contains("<title>Binomic: ").contains("greetings");
        HttpResponse<String> metrics = HTTP.send(HttpRequest.newBuilder(dashboard.uri().resolve("metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).containsPattern("binomic_tasks_total\\{[^}]*task=\"greet\"[^}]*} [1-9]");
    }

    @Test
    void aJobSubmittedOverHttpRunsAndTheActuatorShowsHealthAndMeters() throws Exception {
        String id = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/greetings?name=Grace"))
                .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString()).body();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        String status = get("/greetings/" + id);
        while (!status.startsWith("SUCCEEDED") && System.nanoTime() < deadline) {
            Thread.sleep(100);
            status = get("/greetings/" + id);
        }
        assertThat(status).startsWith("SUCCEEDED").contains("Hello Grace");
        assertThat(status).as("the result as the task's type, as the controller's comment says").isEqualTo("SUCCEEDED Hello Grace");

        String health = get("/actuator/health");
        assertThat(health).containsPattern(BINOMIC_UP_CONSUMING);
        String prometheus = get("/actuator/prometheus");
        assertThat(prometheus).contains("binomic_tasks_total{")
                .containsPattern("binomic_task_duration_seconds_count\\{[^}]*task=\"greet\"[^}]*} [1-9]")
                .contains("binomic_queue_messages{")
                .contains("binomic_broker_up");
    }
}
