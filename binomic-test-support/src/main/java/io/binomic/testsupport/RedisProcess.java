package io.binomic.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A {@code redis-server} of the test's own on a free loopback port, persistence off: never the Redis
 * a machine may run on 6379. A free port found by binding one can be taken by another process before
 * redis-server binds it; then that server exits ("Address already in use") and another port is
 * tried. The server counts as up only when its own log says it is ready, so a test never talks to
 * another process that happens to answer on the port.
 */
public final class RedisProcess implements AutoCloseable {
    private static final int TRIES = 5;
    private static final String READY = "Ready to accept connections";

    private final Process process;
    private final int port;
    private final Path log;

    private RedisProcess(Process process, int port, Path log) {
        this.process = process;
        this.port = port;
        this.log = log;
    }

    /** Starts a server; fails naming the package to install when there is no redis-server binary. */
    public static RedisProcess start() {
        try {
            Path dir = Files.createTempDirectory("binomic-redis-");
            IllegalStateException last = null;
            for (int attempt = 1; attempt <= TRIES; attempt++) {
                int port;
                try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
                    port = probe.getLocalPort();
                }
                Path log = dir.resolve("redis-" + port + ".log");
                Process p;
                try {
                    p = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1", "--save", "",
                            "--appendonly", "no", "--dir", dir.toString())
                            .redirectErrorStream(true).redirectOutput(log.toFile()).start();
                } catch (IOException e) {
                    throw new IllegalStateException("redis-server is not on the PATH, and this test needs a real Redis: install"
                            + " Debian's redis-server package (apt-get install -y redis-server), as .ci/run does", e);
                }
                RedisProcess redis = new RedisProcess(p, port, log);
                try {
                    redis.awaitReady();
                    return redis;
                } catch (IllegalStateException e) {
                    redis.close();
                    last = e;
                }
            }
            throw last;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return port;
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String url() {
        return "redis://127.0.0.1:" + port;
    }

    private void awaitReady() throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!Files.readString(log).contains(READY)) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException("redis-server on port " + port + " did not start: " + Files.readString(log).strip());
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while starting redis-server", e);
            }
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
