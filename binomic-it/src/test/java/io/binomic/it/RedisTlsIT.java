package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.BrokerException;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import io.binomic.testsupport.RedisProcess;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code rediss://} against a real TLS redis-server: a throwaway CA made at test time issues one
 * certificate for a name that is not 127.0.0.1 (refused: the preflight sent AUTH to any server
 * with a trusted certificate, without checking the host name) and one for 127.0.0.1 (connects).
 */
class RedisTlsIT {
    private static final String PASSWORD = "tls-secret";
    private static Path dir;
    private static Path truststore;
    private static final List<Process> servers = new ArrayList<>();
    private static int wrongNamePort;
    private static int rightNamePort;

    @BeforeAll
    static void certificatesAndServers() throws Exception {
        dir = Files.createTempDirectory("binomic-tls-");
        run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
                "-subj", "/CN=Binomic Test CA");
        run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
                "-subj", "/CN=redis.example.internal");
        Files.writeString(dir.resolve("wrong.ext"), "subjectAltName=DNS:redis.example.internal\n");
        Files.writeString(dir.resolve("right.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
        for (String name : List.of("wrong", "right")) {
            run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                    "-out", name + ".crt", "-days", "2", "-extfile", name + ".ext");
        }
        run("keytool", "-importcert", "-noprompt", "-alias", "ca", "-file", "ca.crt", "-keystore", "trust.p12",
                "-storetype", "PKCS12", "-storepass", "changeit");
        truststore = dir.resolve("trust.p12");
        wrongNamePort = startTlsServer("wrong.crt");
        rightNamePort = startTlsServer("right.crt");
    }

    @AfterAll
    static void stopServers() throws InterruptedException {
        for (Process p : servers) {
            p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static void run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("tools.log").toFile())).start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(List.of(command) + " failed: " + Files.readString(dir.resolve("tools.log")));
        }
    }

    /** A redis-server with TLS only (no plain port), not asking for client certificates; returns its port. */
    private static int startTlsServer(String certificate) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = s.getLocalPort();
        }
        File log = dir.resolve("redis-" + port + ".log").toFile();
        Process p = new ProcessBuilder("redis-server", "--port", "0", "--tls-port", Integer.toString(port), "--bind", "127.0.0.1",
                "--tls-cert-file", certificate, "--tls-key-file", "server.key", "--tls-ca-cert-file", "ca.crt",
                "--tls-auth-clients", "no", "--requirepass", PASSWORD, "--save", "", "--appendonly", "no", "--dir", dir.toString())
                .directory(dir.toFile()).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log)).start();
        servers.add(p);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            try (Socket probe = new Socket()) {
                probe.connect(new InetSocketAddress("127.0.0.1", port), 500);
                return port;
            } catch (IOException notYet) {
                if (!p.isAlive() || System.nanoTime() > deadline) {
                    throw new IllegalStateException("TLS redis-server did not start (built without TLS?): "
                            + Files.readString(log.toPath()), notYet);
                }
                Thread.sleep(50);
            }
        }
    }

    private static Broker broker(int port, boolean withTruststore) {
        Map<String, String> options = withTruststore
                ? Map.of("tls.truststore", truststore.toString(), "tls.truststore.password", "changeit") : Map.of();
        return Brokers.redisProvider().create(BrokerConfig.builder().url("rediss://127.0.0.1:" + port).password(PASSWORD)
                .connectTimeout(Duration.ofSeconds(3)).options(options).build());
    }

    @Test
    void aTrustedCertificateForAnotherNameIsRefusedNamingHostnameVerification() {
        Broker broker = broker(wrongNamePort, true);
        try {
            BrokerException e = assertThrows(BrokerException.class, () -> broker.start(List.of("tls")));

            assertTrue(e.getMessage().startsWith("cannot connect to Redis at 127.0.0.1:" + wrongNamePort
                    + ": TLS hostname verification failed: the server's certificate is not issued for this host ("),
                    e.getMessage());
            assertTrue(e.getMessage().contains("127.0.0.1"), e.getMessage());
            assertTrue(e.getMessage().endsWith("; connect with a name the certificate is issued for (BrokerConfig.url),"
                    + " or give the server a certificate for this name"), e.getMessage());
        } finally {
            broker.close();
        }
    }

    @Test
    void aCertificateFromAnUntrustedAuthorityIsRefusedSayingSo() {
        Broker broker = broker(rightNamePort, false);
        try {
            BrokerException e = assertThrows(BrokerException.class, () -> broker.start(List.of("tls")));

            assertTrue(e.getMessage().contains(": TLS certificate not trusted: "), e.getMessage());
            assertTrue(e.getMessage().endsWith("; add the server's CA to the trust store (BrokerConfig option tls.truststore,"
                    + " or the JDK's)"), e.getMessage());
        } finally {
            broker.close();
        }
    }

    /** Found by a user: rediss:// at a plain port was asked whether Redis is frozen and told to raise connectTimeout. */
    @Test
    void aRedissUrlAtAPlainPortSaysTheServerMayNotSpeakTlsThere() {
        try (RedisProcess plain = RedisProcess.start()) {
            Broker broker = broker(plain.port(), true);
            try {
                BrokerException e = assertThrows(BrokerException.class, () -> broker.start(List.of("tls")));

                assertTrue(e.getMessage().startsWith("Redis at 127.0.0.1:" + plain.port() + " did not answer the TLS handshake within 3000 ms"),
                        e.getMessage());
                assertTrue(e.getMessage().contains(", and the port answers plain Redis (no TLS); "), e.getMessage());
                assertTrue(e.getMessage().endsWith("; the server may not speak TLS on this port: use redis:// or the server's"
                        + " TLS port in BrokerConfig.url"), e.getMessage());
                assertFalse(e.getMessage().contains("frozen"), e.getMessage());
            } finally {
                broker.close();
            }
        }
    }

    @Test
    void aTrustedCertificateForTheHostConnects() throws Exception {
        Broker broker = broker(rightNamePort, true);
        try {
            broker.start(List.of("tls"));
            Message sent = Message.fromWire(UUID.randomUUID(), "t", "tls", 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                    "{}".getBytes(StandardCharsets.UTF_8), Map.of());
            broker.enqueue(sent);

            List<Delivery> got = broker.fetch(List.of("tls"), "c1", 10, Duration.ofSeconds(2));

            assertEquals(List.of(sent), got.stream().map(d -> d.message().orElseThrow()).toList());
            assertTrue(broker.settle("c1", got.stream().<io.binomic.api.spi.Settlement>map(io.binomic.api.spi.Settlement.Ack::new).toList()).allApplied());
        } catch (UncheckedIOException e) {
            throw new AssertionError(e);
        } finally {
            broker.close();
        }
    }
}
