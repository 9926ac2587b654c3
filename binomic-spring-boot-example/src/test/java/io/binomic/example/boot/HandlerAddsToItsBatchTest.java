package io.binomic.example.boot;

import static org.assertj.core.api.Assertions.assertThat;

import io.binomic.api.BatchStatus;
import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskContext;
import io.binomic.core.BatchHandle;
import io.binomic.core.Binomic;
import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * What spring-boot.md shows for a handler that submits jobs (here, adds them to its own batch): the
 * {@code Binomic} bean is built from the handler beans, so a handler bean cannot take it as a
 * dependency (a cycle); it takes an {@code ObjectProvider<Binomic>} and resolves it in its body, which
 * runs only once the worker started, after every bean is ready.
 */
@SpringBootTest(classes = {GreetingApplication.class, HandlerAddsToItsBatchTest.MailingHandlers.class},
        webEnvironment = SpringBootTest.WebEnvironment.NONE)
class HandlerAddsToItsBatchTest {
    static final Task<String, Void> SEND_TO_LIST = Task.builder("send-to-list", String.class).queue("mailing").build();
    static final Task<String, Void> SEND = Task.builder("send", String.class).queue("mailing").build();
    static final Queue<String> SENT = new ConcurrentLinkedQueue<>();

    /** Not a {@code @Configuration}: the example's component scan, in the other tests' applications, must not find it. */
    static class MailingHandlers {
        @Bean
        TaskBinding<String, Void> sendToList(ObjectProvider<Binomic> binomic) {
            return SEND_TO_LIST.handledBy(list -> {
                BatchHandle mine = binomic.getObject().batch(TaskContext.current().batchId().orElseThrow());
                for (String member : List.of("ada@example.com", "grace@example.com")) {
                    mine.add(SEND, member);
                }
                mine.close();
                return null;
            });
        }

        @Bean
        TaskBinding<String, Void> send() {
            return SEND.handledBy(to -> {
                SENT.add(to);
                return null;
            });
        }
    }

    @DynamicPropertySource
    static void settings(DynamicPropertyRegistry registry) {
        registry.add("binomic.broker.url", () -> "memory://");
    }

    @Autowired Binomic binomic;

    @Test
    void aHandlerResolvesTheBinomicBeanInItsBodyAndAddsToItsOwnBatch() throws InterruptedException {
        BatchHandle batch = binomic.batch().keepOpen().add(SEND_TO_LIST, "members@example.com").submit();

        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (batch.status().orElseThrow().state() != BatchStatus.State.SUCCEEDED && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        BatchStatus status = batch.status().orElseThrow();
        assertThat(status.state()).as(status.toString()).isEqualTo(BatchStatus.State.SUCCEEDED);
        assertThat(status.total()).isEqualTo(3);
        assertThat(SENT).containsExactlyInAnyOrder("ada@example.com", "grace@example.com");
    }
}
