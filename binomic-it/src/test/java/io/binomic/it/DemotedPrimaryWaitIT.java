package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.Delivery;
import io.binomic.api.spi.Message;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code wait.replicas} across a failover that demotes a primary between a producer's writes and
 * their {@code WAIT}: the writes land on the old primary, its replica has already been promoted (so
 * they reach no replica), the old primary turns into the new one's replica and drops them, and only
 * then answers the {@code WAIT}, with an error. That {@code WAIT} must never be taken as confirmed by
 * anything but the node that ran the writes: the writes are sent again whole, and end up on the new
 * primary. Deterministic: a proxy holds the {@code WAIT} while the test runs the failover with
 * {@code REPLICAOF} on real servers, then points new connections at the new primary (as a client
 * following a failover does) and lets the {@code WAIT} go.
 */
class DemotedPrimaryWaitIT {
    private RedisServer oldPrimary;
    private RedisServer newPrimary;
    private WaitHoldingProxy proxy;
    private final String queue = "demoted-" + UUID.randomUUID().toString().substring(0, 8);

    @BeforeEach
    void start() {
        oldPrimary = RedisServer.startNew();
        newPrimary = RedisServer.startNew();
        newPrimary.call("CONFIG", "SET", "repl-diskless-sync-delay", "0"); // the old primary resyncs from it at once
        newPrimary.call("REPLICAOF", "127.0.0.1", Integer.toString(oldPrimary.port()));
        // the primary's side too: it counts the replica for WAIT only once it has it online
        Await.until(Duration.ofSeconds(20), () -> linkUp(newPrimary)
                && String.valueOf(info(oldPrimary).get("slave0")).contains("state=online"), () -> info(oldPrimary).toString());
        proxy = new WaitHoldingProxy(oldPrimary.port());
    }

    @AfterEach
    void stop() {
        for (AutoCloseable c : new AutoCloseable[] {proxy, oldPrimary, newPrimary}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception e) {
                // closing anyway
            }
        }
    }

    @Test
    void aBulkEnqueueWhoseWaitTheDemotedPrimaryRefusesIsSentAgainWholeToTheNewPrimary() throws Exception {
        enqueueAcrossTheDemotion(5, (broker, messages) -> broker.enqueueAll(messages));
    }

    @Test
    void anEnqueueWhoseWaitTheDemotedPrimaryRefusesIsSentAgainToTheNewPrimary() throws Exception {
        enqueueAcrossTheDemotion(1, (broker, messages) -> broker.enqueue(messages.getFirst()));
    }

    /** A chunk waiting for replicas is one script per queue: each kind of message lands as it would alone. */
    @Test
    void aBulkEnqueueWaitingForReplicasEnqueuesPlainTrackedAndPriorityMessagesOfSeveralQueues() throws Exception {
        String other = queue + "-b";
        BrokerConfig config = BrokerConfig.builder().url(oldPrimary.url()).options(Map.of("wait.replicas", "1")).build();
        try (Broker broker = Brokers.redisProvider().create(config)) {
            broker.start(List.of(queue, other));
            Message plain = message();
            Message tracked = message().toBuilder().id(UUID.randomUUID()).trackFor(Duration.ofHours(1)).build();
            Message urgent = message().toBuilder().id(UUID.randomUUID()).priority(9).build();
            Message elsewhere = message().toBuilder().id(UUID.randomUUID()).queue(other).build();
            broker.enqueueAll(List.of(plain, tracked, urgent, elsewhere));

            List<Delivery> fetched = broker.fetch(List.of(queue, other), "c1", 10, Duration.ofMillis(200));
            assertEquals(Set.of(plain.id(), tracked.id(), urgent.id(), elsewhere.id()),
                    fetched.stream().map(d -> d.message().orElseThrow().id()).collect(Collectors.toSet()), fetched.toString());
            assertEquals(9, fetched.stream().filter(d -> d.message().orElseThrow().id().equals(urgent.id())).findFirst().orElseThrow()
                    .message().orElseThrow().priority());
            assertEquals("QUEUED", newPrimary.call("HGET", "binomic:{" + queue + "}:job:" + tracked.id(), "state"),
                    "the tracked message's record, on the replica too");
            assertEquals(1L, newPrimary.call("XLEN", stream() + ":p9"), "the priority level's stream, on the replica too");
        }
    }

    private void enqueueAcrossTheDemotion(int count, java.util.function.BiConsumer<Broker, List<Message>> enqueue) throws Exception {
        BrokerConfig config = BrokerConfig.builder().url("redis://127.0.0.1:" + proxy.port()).commandTimeout(Duration.ofSeconds(10))
                .options(Map.of("wait.replicas", "1", "wait.timeout", "3s")).build(); // the resend's; the first WAIT is held
        try (Broker broker = Brokers.redisProvider().create(config)) {
            broker.start(List.of(queue));
            broker.enqueue(message()); // confirmed by the replica: both have it
            assertEquals(1L, streamLength(newPrimary));

            newPrimary.call("REPLICAOF", "NO", "ONE"); // promoted; the old primary does not know yet
            Await.until(Duration.ofSeconds(10), () -> "0".equals(info(oldPrimary).get("connected_slaves")),
                    () -> info(oldPrimary).toString());
            proxy.holdNextWait();
            List<Message> messages = IntStream.range(0, count).mapToObj(i -> message()).toList();
            CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> enqueue.accept(broker, messages));
            assertTrue(proxy.awaitHeld(Duration.ofSeconds(10)), "the enqueue's WAIT reached the proxy");
            assertEquals(1L + count, streamLength(oldPrimary), "the old primary took the writes");

            oldPrimary.call("REPLICAOF", "127.0.0.1", Integer.toString(newPrimary.port())); // demoted
            // and the new primary counts it for WAIT only once it has it online (a loaded machine takes a while)
            Await.until(Duration.ofSeconds(20), () -> linkUp(oldPrimary) && streamLength(oldPrimary) == 1L
                            && String.valueOf(info(newPrimary).get("slave0")).contains("state=online"),
                    () -> info(oldPrimary) + ", stream length " + streamLength(oldPrimary) + "; new primary " + info(newPrimary));
            proxy.retarget(newPrimary.port());
            proxy.release(); // the old primary, now a replica, answers: ERR WAIT cannot be used with replica instances

            sent.get(30, TimeUnit.SECONDS);
            assertEquals(1L + count, streamLength(newPrimary), "every message reported enqueued is on the primary that"
                    + " survived the failover, once");
            assertEquals(ids(messages), idsOnNewPrimary().stream().skip(1).collect(Collectors.toSet()));
        }
    }

    private Message message() {
        return Message.fromWire(UUID.randomUUID(), "t", queue, 1, Instant.now().truncatedTo(ChronoUnit.MILLIS),
                "{}".getBytes(StandardCharsets.UTF_8), Map.of());
    }

    private static Set<String> ids(List<Message> messages) {
        return messages.stream().map(m -> m.id().toString()).collect(Collectors.toSet());
    }

    /** The message ids on the new primary's stream, in stream order. */
    private List<String> idsOnNewPrimary() {
        List<?> entries = (List<?>) newPrimary.call("XRANGE", stream(), "-", "+");
        return entries.stream().map(e -> {
            List<?> fields = (List<?>) ((List<?>) e).get(1);
            int at = fields.indexOf("id");
            return at < 0 ? "?" : String.valueOf(fields.get(at + 1));
        }).toList();
    }

    private String stream() {
        return "binomic:{" + queue + "}:stream";
    }

    private long streamLength(RedisServer server) {
        return (Long) server.call("XLEN", stream());
    }

    private static boolean linkUp(RedisServer replica) {
        return "up".equals(info(replica).get("master_link_status"));
    }

    private static Map<String, String> info(RedisServer server) {
        return String.valueOf(server.call("INFO", "replication")).lines().filter(l -> l.contains(":"))
                .collect(Collectors.toMap(l -> l.substring(0, l.indexOf(':')), l -> l.substring(l.indexOf(':') + 1).strip(),
                        (a, b) -> b));
    }

    /**
     * A loopback TCP proxy that, once armed, holds a connection's bytes from its next {@code WAIT}
     * command on until released, and closes that connection once it has forwarded the reply to it.
     * Retargeting points new connections at another server and closes the others.
     */
    private static final class WaitHoldingProxy implements AutoCloseable {
        private static final byte[] WAIT = "*3\r\n$4\r\nWAIT\r\n".getBytes(StandardCharsets.US_ASCII);
        private final ServerSocket listener;
        private final Set<Link> links = ConcurrentHashMap.newKeySet();
        private final AtomicBoolean armed = new AtomicBoolean();
        private final CountDownLatch held = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private volatile int upstream;
        private volatile Link holding;

        WaitHoldingProxy(int upstream) {
            this.upstream = upstream;
            try {
                listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Thread.ofVirtual().start(this::accept);
        }

        int port() {
            return listener.getLocalPort();
        }

        void holdNextWait() {
            armed.set(true);
        }

        boolean awaitHeld(Duration timeout) throws InterruptedException {
            return held.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
        }

        void retarget(int port) {
            upstream = port;
            links.stream().filter(l -> l != holding).forEach(Link::close);
        }

        void release() {
            released.countDown();
        }

        @Override
        public void close() throws IOException {
            listener.close();
            released.countDown();
            links.forEach(Link::close);
        }

        private void accept() {
            while (!listener.isClosed()) {
                try {
                    Socket client = listener.accept();
                    Socket server = new Socket(InetAddress.getLoopbackAddress(), upstream);
                    client.setTcpNoDelay(true);
                    server.setTcpNoDelay(true);
                    Link link = new Link(client, server);
                    links.add(link);
                    Thread.ofVirtual().start(link::requests);
                    Thread.ofVirtual().start(link::replies);
                } catch (IOException e) {
                    // closed, or the upstream refused: the client sees the connection fail
                }
            }
        }

        private final class Link {
            private final Socket client;
            private final Socket server;
            private volatile boolean closeAfterReply;

            Link(Socket client, Socket server) {
                this.client = client;
                this.server = server;
            }

            void requests() {
                try (InputStream in = client.getInputStream(); OutputStream out = server.getOutputStream()) {
                    byte[] buffer = new byte[64 * 1024];
                    for (int n; (n = in.read(buffer)) >= 0; ) {
                        int at = armed.get() ? indexOf(buffer, n, WAIT) : -1;
                        if (at >= 0 && armed.compareAndSet(true, false)) {
                            out.write(buffer, 0, at);
                            out.flush();
                            holding = this;
                            held.countDown();
                            released.await();
                            closeAfterReply = true;
                            out.write(buffer, at, n - at);
                        } else {
                            out.write(buffer, 0, n);
                        }
                        out.flush();
                    }
                } catch (IOException | InterruptedException e) {
                    // closed
                }
                close();
            }

            void replies() {
                try (InputStream in = server.getInputStream(); OutputStream out = client.getOutputStream()) {
                    byte[] buffer = new byte[64 * 1024];
                    for (int n; (n = in.read(buffer)) >= 0; ) {
                        out.write(buffer, 0, n);
                        out.flush();
                        if (closeAfterReply) {
                            break;
                        }
                    }
                } catch (IOException e) {
                    // closed
                }
                close();
            }

            void close() {
                links.remove(this);
                try {
                    client.close();
                    server.close();
                } catch (IOException e) {
                    // closing anyway
                }
            }
        }

        private static int indexOf(byte[] data, int length, byte[] part) {
            for (int i = 0; i + part.length <= length; i++) {
                if (Arrays.equals(data, i, i + part.length, part, 0, part.length)) {
                    return i;
                }
            }
            return -1;
        }
    }
}
