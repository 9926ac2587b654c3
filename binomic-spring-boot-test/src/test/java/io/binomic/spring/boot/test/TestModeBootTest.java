package io.binomic.spring.boot.test;

import static org.assertj.core.api.Assertions.assertThat;

import io.binomic.api.Task;
import io.binomic.api.TaskBinding;
import io.binomic.core.Binomic;
import io.binomic.core.testing.TestMode;
import io.binomic.spring.boot.autoconfigure.BinomicWorkerLifecycle;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

class TestModeBootTest {
    record Welcome(String email) { }

    static final Task<Welcome, Void> WELCOME = Task.builder("welcome", Welcome.class).queue("mail").build();

    /** What the application under test does: submits a job when a user signs up. */
    record SignUp(Binomic binomic) {
        void register(String email) {
            binomic.submit(WELCOME, new Welcome(email));
        }
    }

    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class App {
        static final List<String> SENT = new CopyOnWriteArrayList<>();

        @Bean
        TaskBinding<Welcome, Void> welcome() {
            return WELCOME.handledBy(w -> {
                SENT.add(w.email());
                return null;
            });
        }

        @Bean
        SignUp signUp(Binomic binomic) {
            return new SignUp(binomic);
        }
    }

    @Nested
    @SpringBootTest(classes = App.class, properties = "binomic.broker.url=redis://127.0.0.1:1")
    @AutoConfigureBinomicTestMode
    class Manual {
        @Autowired SignUp signUp;
        @Autowired TestMode jobs;
        @Autowired ApplicationContext context;

        @Test
        void jobsWaitForTheDrainAndNoWorkerOrBrokerIsUsed() {
            App.SENT.clear();
            signUp.register("ada@example.com");
            assertThat(jobs.enqueued(WELCOME)).containsExactly(new Welcome("ada@example.com"));
            assertThat(App.SENT).isEmpty();
            assertThat(jobs.drain().succeeded()).isEqualTo(1);
            assertThat(App.SENT).containsExactly("ada@example.com");
            assertThat(context.getBeansOfType(BinomicWorkerLifecycle.class)).isEmpty();
            assertThat(context.getBean(Binomic.class)).isSameAs(jobs.binomic());
        }
    }

    /** Spring hands both methods the same cached context, and with it the same test mode bean. */
    @Nested
    @SpringBootTest(classes = App.class, properties = "binomic.broker.url=redis://127.0.0.1:1")
    @AutoConfigureBinomicTestMode
    @TestMethodOrder(MethodOrderer.OrderAnnotation.class)
    class TwoTestsSharingTheContext {
        @Autowired SignUp signUp;
        @Autowired TestMode jobs;

        @Test
        @Order(1)
        void theFirstLeavesAJobQueued() {
            signUp.register("bob@example.com");
            assertThat(jobs.enqueued(WELCOME)).containsExactly(new Welcome("bob@example.com"));
        }

        @Test
        @Order(2)
        void theSecondSeesAndRunsOnlyItsOwnJobs() {
            App.SENT.clear();
            signUp.register("ada@example.com");
            assertThat(jobs.enqueued(WELCOME)).containsExactly(new Welcome("ada@example.com"));
            assertThat(jobs.drain().succeeded()).isEqualTo(1);
            assertThat(App.SENT).containsExactly("ada@example.com");
        }
    }

    @Nested
    @SpringBootTest(classes = App.class, properties = "binomic.test-mode=inline")
    @AutoConfigureBinomicTestMode
    class Inline {
        @Autowired TestMode jobs;

        @Test
        void eachJobRunsInsideItsSubmit() {
            App.SENT.clear();
            jobs.binomic().submit(WELCOME, new Welcome("grace@example.com"));
            assertThat(App.SENT).containsExactly("grace@example.com");
            assertThat(jobs.drain().succeeded()).as("nothing left to run after the submit").isZero();
        }
    }
}
