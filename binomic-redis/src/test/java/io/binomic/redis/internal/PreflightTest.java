package io.binomic.redis.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The check before Redisson starts, against servers that are not Redis. */
class PreflightTest {

    /** A server that writes {@code answer} to its first connection, whatever it is sent, and keeps it open a while. */
    private static ServerSocket answering(String answer) throws IOException {
        ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().start(() -> {
            try (Socket client = server.accept()) {
                OutputStream out = client.getOutputStream();
                out.write(answer.getBytes(StandardCharsets.UTF_8));
                out.flush();
                client.getInputStream().readNBytes(1 << 16);
            } catch (IOException closed) {
                // the check closed the connection: done
            }
        });
        return server;
    }

    /**
     * Found by an outside tester: an HTTP server's reply lines passed as Redis replies, and Redisson then
     * retried for about a minute, logging thousands of stack traces.
     */
    @Test
    void anHttpServerIsRefusedAtOnceAsNotRedis() throws IOException {
        try (ServerSocket http = answering("HTTP/1.0 400 Bad request syntax ('*1')\r\nServer: SimpleHTTP/0.6\r\n\r\n")) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> Preflight.check("127.0.0.1", http.getLocalPort(), null, null, null, 0, Duration.ofSeconds(5)));
            assertEquals(Preflight.NOT_REDIS + " (its reply began 'HTTP/1.0 400 Bad request syntax ('*1')')",
                    e.getMessage());
        }
    }

    @Test
    void aServerThatAnswersAsRedisPasses() throws IOException {
        try (ServerSocket redis = answering("+PONG\r\n$0\r\n\r\n")) {
            Preflight.check("127.0.0.1", redis.getLocalPort(), null, null, null, 0, Duration.ofSeconds(5));
        }
    }

    /**
     * Found by an outside tester: a database number the server does not have (redis://host/99) was
     * reported by Redisson's retry with its channel and promise, and "is redis-server running?".
     */
    @Test
    void aDatabaseTheServerDoesNotHaveIsNamedWithTheNumberItHas() throws IOException {
        try (ServerSocket redis = answering("+PONG\r\n$0\r\n\r\n-ERR DB index is out of range\r\n*2\r\n$9\r\ndatabases\r\n$2\r\n16\r\n")) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> Preflight.check("127.0.0.1", redis.getLocalPort(), null, null, null, 99, Duration.ofSeconds(5)));
            assertEquals("Redis refused database 99 (ERR DB index is out of range): it has 16, 0-15", e.getMessage());
        }
    }
}
