package io.binomic.example.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.binomic.spring.boot.autoconfigure.BinomicWorkerLifecycle;
import io.binomic.testsupport.RedisProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** A producer-only application ({@code binomic.worker.enabled=false}): its binomic health component says whether it can submit. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "binomic.worker.enabled=false")
class ProducerOnlyHealthTest {
    private static final RedisProcess REDIS = RedisProcess.start();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    @LocalServerPort int port;
    @Autowired ApplicationContext context;

    @DynamicPropertySource
    static void redis(DynamicPropertyRegistry registry) {
        registry.add("binomic.broker.url", REDIS::url);
    }

    @AfterAll
    static void stopRedis() {
        REDIS.close();
    }

    private HttpResponse<String> health() throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/health/binomic")).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theBinomicComponentIsUpWhileTheBrokerAnswersAndOutOfServiceOnceItStops() throws Exception {
        assertThat(context.getBeansOfType(BinomicWorkerLifecycle.class)).isEmpty();
        HttpResponse<String> up = health();
        assertThat(up.statusCode()).isEqualTo(200);
        assertThat(up.body()).contains("\"status\":\"UP\"").contains("\"broker\":\"UP\"").contains("\"state\":\"NOT_RUNNING\"");

        REDIS.close();
        HttpResponse<String> down = health();
        assertThat(down.statusCode()).isEqualTo(503);
        assertThat(down.body()).contains("\"status\":\"OUT_OF_SERVICE\"").contains("\"broker\":\"UNREACHABLE\"").contains("\"problem\":");
    }
}
