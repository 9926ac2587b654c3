package io.binomic.example.outbox;

import io.binomic.api.JobHandle;
import io.binomic.api.Task;
import io.binomic.jdbc.Outbox;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class OrderService {
    public record ShipOrder(long orderId) { }

    // Tracked, so that the handle place returns can await the job and read its status.
    public static final Task<ShipOrder, Void> SHIP = Task.builder("ship-order", ShipOrder.class).queue("orders")
            .keepStatusFor(Duration.ofDays(1)).build();

    private final JdbcTemplate jdbc;
    private final DataSource dataSource;
    private final Outbox outbox;

    public OrderService(JdbcTemplate jdbc, DataSource dataSource, Outbox outbox) {
        this.jdbc = jdbc;
        this.dataSource = dataSource;
        this.outbox = outbox;
    }

    /** The order and its shipping job commit together, or neither does. */
    @Transactional(rollbackFor = SQLException.class)
    public JobHandle<Void> place(long orderId, String customer) throws SQLException {
        jdbc.update("INSERT INTO orders (id, customer) VALUES (?, ?)", orderId, customer);
        // The transaction's own connection: Spring commits or rolls it back, so do not close it.
        return outbox.submit(DataSourceUtils.getConnection(dataSource), SHIP, new ShipOrder(orderId));
    }
}
