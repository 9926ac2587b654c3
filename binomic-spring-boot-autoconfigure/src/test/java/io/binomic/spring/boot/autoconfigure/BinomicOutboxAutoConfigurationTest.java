package io.binomic.spring.boot.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.binomic.api.SubmitOptions;
import io.binomic.api.TaskBinding;
import io.binomic.api.TaskContext;
import io.binomic.core.Binomic;
import io.binomic.example.outbox.OrderService;
import io.binomic.example.outbox.OrderService.ShipOrder;
import io.binomic.jdbc.Outbox;
import io.binomic.jdbc.OutboxRelay;
import io.binomic.testsupport.PostgresServer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The outbox in a Spring application against a PostgreSQL of the test's own: the starter wires an
 * {@link Outbox} and a started {@link OutboxRelay} when binomic-jdbc and a DataSource are present,
 * and a submit inside {@code @Transactional} (outbox.md's {@link OrderService}) commits or rolls
 * back with the application's rows: rolled back, no job; committed, one run.
 */
class BinomicOutboxAutoConfigurationTest {
    private static PostgresServer postgres;
    private static final Map<UUID, AtomicInteger> RUNS = new ConcurrentHashMap<>();

    @Configuration(proxyBeanMethods = false)
    @Import(OrderService.class)
    static class Shop {
        @Bean
        TaskBinding<ShipOrder, Void> ship() {
            return OrderService.SHIP.handledBy(order -> {
                RUNS.computeIfAbsent(TaskContext.current().messageId(), id -> new AtomicInteger()).incrementAndGet();
                return null;
            });
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
                    JdbcTemplateAutoConfiguration.class, TransactionAutoConfiguration.class, BinomicAutoConfiguration.class,
                    BinomicOutboxAutoConfiguration.class))
            .withUserConfiguration(Shop.class);

    @BeforeAll
    static void database() throws Exception {
        postgres = PostgresServer.startNew();
        try (Connection c = postgres.connect(); Statement s = c.createStatement()) {
            s.execute(Outbox.schemaSql());
            s.execute("CREATE TABLE orders (id BIGINT PRIMARY KEY, customer TEXT NOT NULL)");
        }
    }

    @AfterAll
    static void stopDatabase() {
        if (postgres != null) {
            postgres.close();
        }
    }

    private ApplicationContextRunner withDatabase() {
        return runner.withPropertyValues("spring.datasource.url=" + postgres.jdbcUrl(), "binomic.worker.poll-timeout=100ms");
    }

    @Test
    void transactionalSubmitRollsBackWithTheOrderAndRunsOnceWhenCommitted() {
        RUNS.clear();
        withDatabase().run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(Outbox.class).hasSingleBean(OutboxRelay.class);
            OrderService orders = context.getBean(OrderService.class);
            JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
            TransactionTemplate transaction = context.getBean(TransactionTemplate.class);

            UUID rolledBack = transaction.execute(status -> {
                try {
                    UUID id = orders.place(1, "rolled back").id();
                    status.setRollbackOnly(); // after Outbox.submit: the order and its job go together
                    return id;
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            UUID committed = orders.place(2, "committed").id();

            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!RUNS.containsKey(committed) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            Thread.sleep(1500); // a duplicate would be relayed and run within this
            assertThat(RUNS.get(committed)).as("runs of the committed order's job").hasValue(1);
            assertThat(RUNS).as("jobs that ran").doesNotContainKey(rolledBack).hasSize(1);
            assertThat(jdbc.queryForList("SELECT id FROM orders", Long.class)).containsExactly(2L);
            assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM binomic_outbox", Long.class)).isZero();
            assertThat(context.getBean(OutboxRelay.class).listening()).as("the relay waits on LISTEN").isTrue();
        });
    }

    /** A relay of the application's own, never started: the rows it would relay wait for the meters to read. */
    @Configuration(proxyBeanMethods = false)
    static class IdleRelay {
        @Bean
        OutboxRelay idleRelay(Binomic binomic, DataSource dataSource) {
            return OutboxRelay.builder(binomic, dataSource).build();
        }
    }

    @Test
    void metersGiveTheRowsWaitingAndTheOldestAge() {
        withDatabase().withUserConfiguration(IdleRelay.class).run(context -> {
            assertThat(context).hasSingleBean(OutboxRelay.class).hasBean("idleRelay");
            Outbox outbox = context.getBean(Outbox.class);
            DataSource dataSource = context.getBean(DataSource.class);
            context.getBean(TransactionTemplate.class).executeWithoutResult(status -> {
                try {
                    outbox.submitAll(DataSourceUtils.getConnection(dataSource), OrderService.SHIP,
                            List.of(new ShipOrder(10), new ShipOrder(11)), SubmitOptions.NONE);
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(20);
            try {
                SimpleMeterRegistry registry = new SimpleMeterRegistry();
                context.getBean("binomicOutboxMeters", MeterBinder.class).bindTo(registry);
                assertThat(registry.get("binomic.outbox.waiting").tag("table", "binomic_outbox").gauge().value()).isEqualTo(2.0);
                assertThat(registry.get("binomic.outbox.oldest.age").tag("table", "binomic_outbox").gauge().value()).isPositive();
            } finally {
                context.getBean(JdbcTemplate.class).update("DELETE FROM binomic_outbox");
            }
        });
    }

    @Test
    void relayPropertyOffLeavesTheOutboxWithoutARelay() {
        withDatabase().withPropertyValues("binomic.outbox.relay=false").run(context ->
                assertThat(context).hasNotFailed().hasSingleBean(Outbox.class).doesNotHaveBean(OutboxRelay.class));
    }

    @Test
    void withoutADataSourceThereIsNoOutbox() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(BinomicAutoConfiguration.class,
                        BinomicOutboxAutoConfiguration.class))
                .run(context -> assertThat(context).doesNotHaveBean(Outbox.class).doesNotHaveBean(OutboxRelay.class));
    }

    @Test
    void outboxMdShowsTheExampleCompiledAndRunHere() throws IOException {
        Path root = Path.of("").toAbsolutePath();
        while (!Files.exists(root.resolve("module-info-docs"))) {
            root = root.getParent();
        }
        String source = Files.readString(root.resolve(
                "binomic-spring-boot-autoconfigure/src/test/java/io/binomic/example/outbox/OrderService.java")).strip();
        assertThat(Files.readString(root.resolve("module-info-docs/outbox.md"))).contains("```Java\n" + source + "\n```");
    }
}
