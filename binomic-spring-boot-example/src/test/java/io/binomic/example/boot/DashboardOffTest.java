package io.binomic.example.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.binomic.core.Dashboard;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** Without binomic.dashboard.enabled the application serves no dashboard: no bean, nothing listening on its port. */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.NONE)
class DashboardOffTest {
    private static final int PORT = freePort();

    @Autowired ApplicationContext context;

    @DynamicPropertySource
    static void settings(DynamicPropertyRegistry registry) {
        registry.add("binomic.broker.url", () -> "memory://");
        registry.add("binomic.dashboard.port", () -> PORT);
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void theDashboardIsOffUnlessEnabled() {
        assertThat(context.getBeanNamesForType(Dashboard.class)).isEmpty();
        assertThatThrownBy(() -> {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), PORT), 2_000);
            }
        }).isInstanceOf(ConnectException.class);
    }
}
