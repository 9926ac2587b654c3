package io.binomic.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** A {@code redis-server} of the test's own on a free loopback port, persistence off; closed after the test. */
final class LocalRedis implements AutoCloseable {
    private final Process process;
    private final int port;

    private LocalRedis(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    static LocalRedis start() throws IOException, InterruptedException {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        Path dir = Files.createTempDirectory("binomic-otel-redis-");
        Process process;
        try {
            process = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no", "--dir", dir.toString())
                    .redirectErrorStream(true).redirectOutput(dir.resolve("redis.log").toFile()).start();
        } catch (IOException e) {
            throw new IOException("redis-server is not on the PATH: install it (apt-get install redis-server) to run this test", e);
        }
        LocalRedis redis = new LocalRedis(process, port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!redis.answersPing()) {
            if (System.nanoTime() > deadline || !process.isAlive()) {
                redis.close();
                throw new IllegalStateException("redis-server on port " + port + " did not answer PING; see " + dir.resolve("redis.log"));
            }
            Thread.sleep(50);
        }
        return redis;
    }

    String url() {
        return "redis://127.0.0.1:" + port;
    }

    private boolean answersPing() {
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
            OutputStream out = socket.getOutputStream();
            out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] reply = in.readNBytes(7);
            return new String(reply, StandardCharsets.US_ASCII).equals("+PONG\r\n");
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
