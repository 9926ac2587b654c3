package io.binomic.example.boot;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A {@code redis-server} of the test's own on a free loopback port, persistence off: never the Redis
 * a machine may run on 6379. Without the binary, the test fails saying how to install it.
 */
final class RedisFixture implements AutoCloseable {
    private final Process process;
    private final int port;

    private RedisFixture(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    static RedisFixture start() {
        try {
            int port;
            try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                port = probe.getLocalPort();
            }
            Path dir = Files.createTempDirectory("binomic-boot-redis-");
            Process p;
            try {
                p = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "",
                        "--appendonly", "no", "--dir", dir.toString())
                        .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
            } catch (IOException e) {
                throw new IllegalStateException("redis-server is not on the PATH, and this test needs a real Redis: install"
                        + " Debian's redis-server package (apt-get install -y redis-server), as .ci/run does", e);
            }
            RedisFixture redis = new RedisFixture(p, port);
            redis.awaitPong();
            return redis;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String url() {
        return "redis://127.0.0.1:" + port;
    }

    private void awaitPong() throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                OutputStream out = s.getOutputStream();
                out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                InputStream in = s.getInputStream();
                byte[] reply = in.readNBytes(7);
                if (new String(reply, StandardCharsets.US_ASCII).equals("+PONG\r\n")) {
                    return;
                }
            } catch (IOException e) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    close();
                    throw new IllegalStateException("redis-server did not answer PING on port " + port, e);
                }
            }
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
