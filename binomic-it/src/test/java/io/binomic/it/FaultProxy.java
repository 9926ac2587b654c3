package io.binomic.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.Arrays;
import java.util.OptionalLong;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on loopback between a client and one server, with faults the test switches on and
 * off while connections are open: latency added per direction, a stall (nothing is forwarded, both
 * sockets stay open, so no reset tells either side), a bandwidth limit, and resets in the middle of
 * a reply (half of the next chunk from the server, then an RST both ways).
 *
 * <p>Each connection has a reader and a writer per direction on virtual threads; a direction holds
 * at most {@value #QUEUED_CHUNKS} chunks of up to {@value #CHUNK} bytes, then stops reading, so a
 * stalled or slow direction pushes back on its sender as a slow network would, and memory stays
 * bounded. At most {@value #MAX_CONNECTIONS} connections are open at once (more are refused with a
 * reset), and the proxy closes itself after its lifetime, should a test forget to.
 */
final class FaultProxy implements AutoCloseable {
    private static final int CHUNK = 16 * 1024;
    private static final int QUEUED_CHUNKS = 256;
    private static final int MAX_CONNECTIONS = 256;

    private final InetSocketAddress upstream;
    private final ServerSocket listener;
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private final Thread closer;
    private volatile boolean closed;
    private volatile long latencyNanos;
    /** The next request holding these bytes has its reply held for {@link #replyHoldNanos}; null for none. */
    private final java.util.concurrent.atomic.AtomicReference<byte[]> heldRequest = new java.util.concurrent.atomic.AtomicReference<>();
    private volatile long replyHoldNanos;
    /** Replies read before this ({@link System#nanoTime()}) are held no longer; null while none were released. */
    private volatile Long heldRepliesReleasedAt;
    /** Bytes per second per direction and connection; 0 for no limit. */
    private volatile long bytesPerSecond;
    private volatile boolean stalled;
    /** Bumped by {@link #resetMidReply()}: a link whose next reply chunk sees a newer value resets. */
    private final AtomicLong resetGeneration = new AtomicLong();
    private final AtomicLong resets = new AtomicLong();
    private final AtomicLong accepted = new AtomicLong();
    /** Every connection ever accepted, for when its client gave it up. */
    private final Queue<Link> history = new ConcurrentLinkedQueue<>();

    private FaultProxy(InetSocketAddress upstream, Duration lifetime) throws IOException {
        this.upstream = upstream;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("fault-proxy-accept").start(this::acceptLoop);
        this.closer = Thread.ofVirtual().name("fault-proxy-lifetime").start(() -> {
            try {
                Thread.sleep(lifetime);
                close();
            } catch (InterruptedException e) {
                // closed by the test
            }
        });
    }

    /** A proxy on a free loopback port to {@code host:port}; it closes itself after {@code lifetime}. */
    static FaultProxy to(String host, int port, Duration lifetime) {
        try {
            return new FaultProxy(new InetSocketAddress(host, port), lifetime);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    int port() {
        return listener.getLocalPort();
    }

    /** Delay added to every chunk in each direction (a round trip gets twice it); zero for none. */
    void latency(Duration perDirection) {
        latencyNanos = perDirection.toNanos();
    }

    /**
     * Holds for {@code hold} the reply to the next request that contains {@code text}: the request
     * goes through at once, its reply comes late. Other commands, such as the client's pings, and
     * the requests after it are not held.
     */
    void holdReplyToNext(String text, Duration hold) {
        replyHoldNanos = hold.toNanos();
        heldRequest.set(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** Whether the request {@link #holdReplyToNext} waits for has not come yet. */
    boolean replyHoldWaiting() {
        return heldRequest.get() != null;
    }

    /** Forwards at once the replies {@link #holdReplyToNext} holds now (a client's close would wait for them). */
    void releaseHeldReplies() {
        heldRepliesReleasedAt = System.nanoTime();
    }

    /** At most this many bytes per second per direction on each connection; 0 for no limit. */
    void bandwidth(long limit) {
        bytesPerSecond = limit;
    }

    /** Stops forwarding anything (true) or forwards again what waited and what comes (false); no socket is closed. */
    void stall(boolean on) {
        stalled = on;
    }

    /**
     * Every open connection stops forwarding for good, its sockets left open (a middlebox that
     * dropped the flows); connections opened after it work.
     */
    void blackHoleOpenConnections() {
        for (Link link : links) {
            link.blackHoled = true;
        }
    }

    /** Every open connection resets after forwarding half of its next chunk from the server. */
    void resetMidReply() {
        resetGeneration.incrementAndGet();
    }

    /** Connections reset by {@link #resetMidReply()} so far. */
    long resets() {
        return resets.get();
    }

    /** Connections accepted so far. */
    long accepted() {
        return accepted.get();
    }

    /**
     * The first time, at or after {@code sinceNanos} ({@link System#nanoTime()}), a client closed a
     * connection that was open then and that the proxy still had open: during a stall, when the
     * client gave up on one (connections opened later, and given up, do not count).
     */
    OptionalLong firstClientCloseSince(long sinceNanos) {
        return history.stream().filter(link -> link.opened < sinceNanos).mapToLong(link -> link.clientClosed)
                .filter(t -> t != 0 && t >= sinceNanos).min();
    }

    /**
     * When the client had closed every connection that was open at {@code atNanos}: during a
     * stall, when it had given up all of them; empty while one of them is still open.
     */
    OptionalLong allClientClosesOfOpenAt(long atNanos) {
        long last = 0;
        for (Link link : history) {
            if (link.opened < atNanos && (link.closedNanos == 0 || link.closedNanos >= atNanos)) {
                if (link.clientClosed == 0) {
                    return OptionalLong.empty();
                }
                last = Math.max(last, link.clientClosed);
            }
        }
        return last == 0 ? OptionalLong.empty() : OptionalLong.of(last);
    }

    /** No fault: no latency, no limit, no stall. */
    void heal() {
        latencyNanos = 0;
        heldRequest.set(null);
        bytesPerSecond = 0;
        stalled = false;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closer.interrupt();
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Link link : links) {
            link.close(false);
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            if (links.size() >= MAX_CONNECTIONS) {
                abort(client);
                continue;
            }
            accepted.incrementAndGet();
            Thread.ofVirtual().name("fault-proxy-connect").start(() -> connect(client));
        }
    }

    private void connect(Socket client) {
        Socket server = new Socket();
        try {
            server.connect(upstream, 2000);
            client.setTcpNoDelay(true);
            server.setTcpNoDelay(true);
        } catch (IOException e) {
            abort(client);
            abort(server);
            return;
        }
        Link link = new Link(client, server, resetGeneration.get());
        links.add(link);
        history.add(link);
        if (closed) {
            link.close(false);
            return;
        }
        link.start();
    }

    /** Closes with an RST instead of a FIN. */
    private static void abort(Socket socket) {
        try {
            socket.setSoLinger(true, 0);
        } catch (SocketException ignored) {
            // closing anyway
        }
        try {
            socket.close();
        } catch (IOException ignored) {
            // already gone
        }
    }

    private record Chunk(byte[] bytes, long readNanos, long heldNanos) { }

    private static boolean contains(byte[] buffer, int length, byte[] text) {
        outer:
        for (int i = 0; i + text.length <= length; i++) {
            for (int j = 0; j < text.length; j++) {
                if (buffer[i + j] != text[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /** One proxied connection: client to server (requests) and server to client (replies). */
    private final class Link {
        private final Socket client;
        private final Socket server;
        private final long resetSeen;
        private volatile boolean done;
        private volatile boolean blackHoled;
        /** How long the next reply read is held: the request of {@link #holdReplyToNext} came; 0 for not at all. */
        private volatile long holdNextReplyNanos;
        private final long opened = System.nanoTime();
        /** When the client closed it while the proxy had it open ({@link System#nanoTime()}); 0 if it did not. */
        private volatile long clientClosed;
        /** When either side closed it ({@link System#nanoTime()}); 0 while it is open. */
        private volatile long closedNanos;

        Link(Socket client, Socket server, long resetSeen) {
            this.client = client;
            this.server = server;
            this.resetSeen = resetSeen;
        }

        void start() {
            pump(client, server, false);
            pump(server, client, true);
        }

        private void pump(Socket from, Socket to, boolean replies) {
            BlockingQueue<Chunk> queue = new ArrayBlockingQueue<>(QUEUED_CHUNKS);
            Thread.ofVirtual().name("fault-proxy-read").start(() -> read(from, queue));
            Thread.ofVirtual().name("fault-proxy-write").start(() -> write(queue, to, replies));
        }

        private void read(Socket from, BlockingQueue<Chunk> queue) {
            try (InputStream in = from.getInputStream()) {
                byte[] buffer = new byte[CHUNK];
                while (!done) {
                    int n = in.read(buffer);
                    if (n < 0) {
                        break;
                    }
                    long held = 0;
                    if (from == client) {
                        byte[] text = heldRequest.get();
                        if (text != null && contains(buffer, n, text) && heldRequest.compareAndSet(text, null)) {
                            holdNextReplyNanos = replyHoldNanos;
                        }
                    } else {
                        held = holdNextReplyNanos;
                        holdNextReplyNanos = 0;
                    }
                    queue.put(new Chunk(Arrays.copyOf(buffer, n), System.nanoTime(), held));
                }
            } catch (IOException | InterruptedException e) {
                // closed, reset or stopping
            }
            if (from == client && !done) {
                clientClosed = System.nanoTime();
            }
            // End of stream: let the writer forward what is queued, then end the link.
            queue.offer(new Chunk(new byte[0], System.nanoTime(), 0));
        }

        private void write(BlockingQueue<Chunk> queue, Socket to, boolean replies) {
            try (OutputStream out = to.getOutputStream()) {
                while (!done) {
                    Chunk chunk = queue.poll(100, TimeUnit.MILLISECONDS);
                    if (chunk == null) {
                        continue;
                    }
                    if (chunk.bytes().length == 0) {
                        break;
                    }
                    awaitDue(chunk);
                    byte[] bytes = chunk.bytes();
                    if (replies && resetGeneration.get() != resetSeen && bytes.length > 1) {
                        out.write(bytes, 0, bytes.length / 2);
                        out.flush();
                        resets.incrementAndGet();
                        close(true);
                        return;
                    }
                    send(out, bytes);
                }
            } catch (IOException | InterruptedException e) {
                // closed, reset or stopping
            }
            close(false);
        }

        /** Waits out the added latency, and a stall for as long as it lasts. */
        private void awaitDue(Chunk chunk) throws InterruptedException {
            while (!done) {
                Long released = heldRepliesReleasedAt;
                long held = released != null && released - chunk.readNanos() >= 0 ? 0 : chunk.heldNanos();
                long wait = chunk.readNanos() + latencyNanos + held - System.nanoTime();
                if (!stalled && !blackHoled && wait <= 0) {
                    return;
                }
                Thread.sleep(Duration.ofNanos(stalled || blackHoled ? 10_000_000 : Math.min(wait, 10_000_000)));
            }
        }

        /** Writes at most the bandwidth limit per second, in slices of a fiftieth of it. */
        private void send(OutputStream out, byte[] bytes) throws IOException, InterruptedException {
            int offset = 0;
            while (offset < bytes.length) {
                long limit = bytesPerSecond;
                int slice = limit == 0 ? bytes.length - offset : (int) Math.max(1, Math.min(bytes.length - offset, limit / 50));
                while ((stalled || blackHoled) && !done) {
                    Thread.sleep(10);
                }
                out.write(bytes, offset, slice);
                out.flush();
                offset += slice;
                if (limit != 0) {
                    Thread.sleep(Duration.ofNanos(slice * 1_000_000_000L / limit));
                }
            }
        }

        void close(boolean reset) {
            if (done) {
                return;
            }
            done = true;
            closedNanos = System.nanoTime();
            links.remove(this);
            if (reset) {
                abort(client);
                abort(server);
                return;
            }
            try {
                client.close();
            } catch (IOException ignored) {
                // already gone
            }
            try {
                server.close();
            } catch (IOException ignored) {
                // already gone
            }
        }
    }
}
