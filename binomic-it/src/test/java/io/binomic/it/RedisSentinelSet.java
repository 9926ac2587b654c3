package io.binomic.it;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * A Redis primary with replicas and three sentinels, all {@code redis-server} processes on free
 * loopback ports (no Docker: a container's address is not one the sentinels could hand to a
 * client outside it). Persistence is off, so what a killed primary had not replicated is gone, as
 * after a lost machine. {@link #failover()} kills the primary with SIGKILL and returns once the
 * sentinels have promoted a replica; {@link #rejoin} brings the killed node back as a replica of
 * the new primary.
 *
 * <p>Sentinel timings are short (down after 1 s, failover timeout 4 s), so a failover completes in a
 * few seconds; production defaults are 30 s and 3 min.
 */
public final class RedisSentinelSet implements AutoCloseable {
    /** The name the sentinels monitor the primary by ({@code sentinelServersConfig.masterName}). */
    public static final String MASTER_NAME = "binomic";
    private static final String HOST = "127.0.0.1";
    private static final Duration DOWN_AFTER = Duration.ofMillis(1000);
    private static final Duration FAILOVER_TIMEOUT = Duration.ofMillis(4000);
    private static final Duration READY = Duration.ofSeconds(30);
    private static final String REPLICA_USER = "replica";
    private static final String REPLICA_PASSWORD = "replica-secret";

    private final Path dir;
    private final List<Node> nodes = new ArrayList<>();
    private final List<Sentinel> sentinels = new ArrayList<>();

    /** One Redis data node; its port never changes, its role does. */
    public static final class Node {
        private final int port;
        private final Path dir;
        private Process process;

        private Node(int port, Path dir) {
            this.port = port;
            this.dir = dir;
        }

        public int port() {
            return port;
        }

        /** {@code redis://127.0.0.1:<port>}: the node itself, bypassing the sentinels. */
        public String url() {
            return "redis://" + HOST + ":" + port;
        }

        public boolean alive() {
            return process != null && process.isAlive();
        }

        @Override
        public String toString() {
            return HOST + ":" + port;
        }
    }

    private record Sentinel(int port, Process process) { }

    private RedisSentinelSet(Path dir) {
        this.dir = dir;
    }

    /** A primary, one replica and three sentinels (quorum 2), ready for a failover. */
    public static RedisSentinelSet start() {
        return start(1);
    }

    /** A primary, {@code replicas} replicas and three sentinels (quorum 2), ready for a failover. */
    public static RedisSentinelSet start(int replicas) {
        if (replicas < 1) {
            throw new IllegalArgumentException("a failover needs at least one replica, was " + replicas);
        }
        RedisSentinelSet set;
        try {
            set = new RedisSentinelSet(Files.createTempDirectory("binomic-sentinel-"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // A test that dies before close() must not leave redis-server processes behind.
        Runtime.getRuntime().addShutdownHook(new Thread(set::stopProcesses));
        try {
            Node primary = set.startNode(freePort(), null);
            for (int i = 0; i < replicas; i++) {
                set.startNode(freePort(), primary);
            }
            set.awaitReplicasLinked(primary, replicas);
            for (int i = 0; i < 3; i++) {
                set.startSentinel(freePort(), primary.port);
            }
            set.awaitSentinelsSee(primary, replicas);
            return set;
        } catch (RuntimeException | Error e) {
            set.stopProcesses(); // the logs stay in the directory the message names
            throw e;
        }
    }

    /** The sentinels' addresses as Redisson wants them: {@code redis://127.0.0.1:<port>}. */
    public List<String> sentinelAddresses() {
        return sentinels.stream().map(s -> "redis://" + HOST + ":" + s.port()).toList();
    }

    /**
     * A Redisson YAML file ({@code sentinelServersConfig}) for these sentinels: what a user passes as
     * broker option {@code redisson.config}. Reads go to the primary ({@code readMode: "MASTER"}):
     * replicas lag, and a worker or the CLI must see its own writes.
     */
    public Path writeRedissonYaml() {
        StringBuilder yaml = new StringBuilder("sentinelServersConfig:\n  masterName: \"" + MASTER_NAME + "\"\n"
                + "  readMode: \"MASTER\"\n  sentinelAddresses:\n");
        sentinelAddresses().forEach(a -> yaml.append("    - \"").append(a).append("\"\n"));
        Path file = dir.resolve("redisson-sentinel-" + System.nanoTime() + ".yaml");
        try {
            Files.writeString(file, yaml);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /** The node the sentinels name as primary now (asked of the first sentinel that answers). */
    public Node primary() {
        for (Sentinel s : sentinels) {
            Integer port = primaryPortPerSentinel(s);
            if (port != null) {
                return node(port);
            }
        }
        throw new IllegalStateException("no sentinel answers; see " + dir);
    }

    /** Every data node, the killed ones included. */
    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    /** One raw command to a data node. */
    public Object call(Node node, String... args) {
        Object reply = Resp.call(HOST, node.port, args);
        if (reply instanceof Resp.Error e) {
            throw new IllegalStateException("Redis " + node + " replied " + e.message() + " to " + List.of(args));
        }
        return reply;
    }

    /**
     * Kills the primary with SIGKILL (nothing it had not yet sent to a replica survives) and returns
     * the replica the sentinels promoted, once every sentinel names it and it answers as a primary.
     */
    public Node failover() {
        Node old = primary();
        kill(old);
        return awaitPromotionAfter(old);
    }

    /** Waits until the sentinels have promoted a replica in place of {@code old} (killed), and returns it. */
    public Node awaitPromotionAfter(Node old) {
        await(READY, () -> {
            Set<Integer> named = new HashSet<>();
            for (Sentinel s : sentinels) {
                named.add(primaryPortPerSentinel(s));
            }
            if (named.size() != 1 || named.contains(null) || named.contains(old.port)) {
                return false;
            }
            Node promoted = node(named.iterator().next());
            return promoted.alive() && "master".equals(role(promoted));
        }, () -> "the sentinels did not promote a replica after " + old + " was killed: they name "
                + sentinels.stream().map(this::primaryPortPerSentinel).toList() + "; logs in " + dir);
        return primary();
    }

    /**
     * From now on the primary's replicas receive none of its writes, as replicas that fell far behind
     * (a slow link, a long full resync): their links are cut and their user refused, so they cannot
     * reconnect. What the primary acknowledges after this is lost at a failover.
     * {@link #resumeReplication()} undoes it.
     */
    public void stallReplication() {
        Node primary = primary();
        call(primary, "ACL", "SETUSER", REPLICA_USER, "off");
        call(primary, "CLIENT", "KILL", "TYPE", "replica");
        // The kill takes effect when the primary next frees clients, not with the reply.
        await(READY, () -> "0".equals(info(primary).get("connected_slaves")), () -> "replicas still connected to " + primary);
    }

    /** Undoes {@link #stallReplication()} on the current primary: the replicas reconnect and catch up. */
    public void resumeReplication() {
        call(primary(), "ACL", "SETUSER", REPLICA_USER, "on");
    }

    /** SIGKILL of one data node, without waiting for the sentinels. */
    public void kill(Node node) {
        if (node.process == null) {
            return;
        }
        node.process.destroyForcibly();
        try {
            node.process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Starts a killed node again, empty, as a replica of the current primary, and waits until it has
     * synced: after a failover this restores the replica count that {@code WAIT} needs.
     */
    public void rejoin(Node node) {
        if (node.alive()) {
            throw new IllegalStateException(node + " is running");
        }
        Node primary = primary();
        launch(node, primary);
        awaitPong(node);
        await(READY, () -> linkUp(node), () -> node + " did not finish syncing from " + primary + "; see " + node.dir);
    }

    /** Waits until every replica has acknowledged everything written to the primary so far. */
    public void awaitReplicasInSync() {
        Node primary = primary();
        await(READY, () -> {
            Map<String, String> info = info(primary);
            long offset = Long.parseLong(info.get("master_repl_offset"));
            int connected = Integer.parseInt(info.get("connected_slaves"));
            if (connected == 0) {
                return false;
            }
            for (int i = 0; i < connected; i++) {
                String slave = info.get("slave" + i);
                if (slave == null || !slave.contains("state=online") || !slave.contains("offset=" + offset + ",")) {
                    return false;
                }
            }
            return true;
        }, () -> "replicas of " + primary + " did not catch up: " + info(primary));
    }

    /** Stops every process and deletes the set's directory (logs, configuration files). */
    @Override
    public synchronized void close() {
        stopProcesses();
        try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException gone) {
            // best effort
        }
    }

    private synchronized void stopProcesses() {
        for (Sentinel s : sentinels) {
            s.process().destroyForcibly();
        }
        for (Node n : nodes) {
            if (n.process != null) {
                n.process.destroyForcibly();
            }
        }
        for (Sentinel s : sentinels) {
            waitFor(s.process());
        }
        for (Node n : nodes) {
            if (n.process != null) {
                waitFor(n.process);
            }
        }
    }

    // ---- start-up ------------------------------------------------------------------------

    private Node startNode(int port, Node primary) {
        Path nodeDir = dir.resolve("node-" + port);
        try {
            Files.createDirectories(nodeDir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Node node = new Node(port, nodeDir);
        nodes.add(node);
        launch(node, primary);
        awaitPong(node);
        return node;
    }

    private void launch(Node node, Node primary) {
        List<String> command = new ArrayList<>(List.of(redisServer(), "--port", Integer.toString(node.port), "--bind", HOST,
                "--save", "", "--appendonly", "no", "--dir", node.dir.toString(),
                // Diskless, undelayed full syncs: a rejoining node is a replica again in milliseconds.
                "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0",
                "--repl-ping-replica-period", "1"));
        // Replicas log in as a user of their own, so that stallReplication can refuse them alone.
        command.addAll(List.of("--user", REPLICA_USER, "on", ">" + REPLICA_PASSWORD, "+psync", "+replconf", "+ping",
                "--masteruser", REPLICA_USER, "--masterauth", REPLICA_PASSWORD));
        if (primary != null) {
            command.addAll(List.of("--replicaof", HOST, Integer.toString(primary.port)));
        }
        node.process = start(command, node.dir.resolve("redis.log"));
    }

    private void startSentinel(int port, int primaryPort) {
        Path sentinelDir = dir.resolve("sentinel-" + port);
        Path conf = sentinelDir.resolve("sentinel.conf");
        try {
            Files.createDirectories(sentinelDir);
            // Sentinel rewrites its file (discovered peers, epochs), so each needs a writable one of its own.
            Files.writeString(conf, """
                    port %d
                    bind %s
                    dir %s
                    sentinel monitor %s %s %d 2
                    sentinel down-after-milliseconds %s %d
                    sentinel failover-timeout %s %d
                    sentinel parallel-syncs %s 1
                    """.formatted(port, HOST, sentinelDir, MASTER_NAME, HOST, primaryPort, MASTER_NAME, DOWN_AFTER.toMillis(),
                    MASTER_NAME, FAILOVER_TIMEOUT.toMillis(), MASTER_NAME));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Process process = start(List.of(redisServer(), conf.toString(), "--sentinel"), sentinelDir.resolve("sentinel.log"));
        sentinels.add(new Sentinel(port, process));
    }

    private static Process start(List<String> command, Path log) {
        try {
            // Never inheritIO inside surefire: a child writing to our stdout corrupts its channel.
            return new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
    }

    private void awaitReplicasLinked(Node primary, int replicas) {
        await(READY, () -> nodes.stream().filter(n -> n != primary).allMatch(this::linkUp),
                () -> "replicas did not link to " + primary + "; logs in " + dir);
    }

    /**
     * A failover needs each sentinel to know the replica (from the primary's INFO) and the other
     * sentinels (from their hello messages, every 2 s): until then a kill would not be acted upon.
     */
    private void awaitSentinelsSee(Node primary, int replicas) {
        await(READY, () -> sentinels.stream().allMatch(s -> {
            try {
                Object replicasSeen = Resp.call(HOST, s.port(), "SENTINEL", "REPLICAS", MASTER_NAME);
                Object master = Resp.call(HOST, s.port(), "SENTINEL", "MASTER", MASTER_NAME);
                return replicasSeen instanceof List<?> r && r.size() == replicas
                        && master instanceof List<?> m && "2".equals(field(m, "num-other-sentinels"));
            } catch (RuntimeException notListeningYet) {
                return false;
            }
        }), () -> "the sentinels did not discover each other and the replicas of " + primary + "; logs in " + dir);
    }

    // ---- probes --------------------------------------------------------------------------

    private Integer primaryPortPerSentinel(Sentinel s) {
        try {
            Object reply = Resp.call(HOST, s.port(), "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
            return reply instanceof List<?> addr && addr.size() == 2 ? Integer.valueOf(String.valueOf(addr.get(1))) : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    private String role(Node node) {
        try {
            return Resp.call(HOST, node.port, "ROLE") instanceof List<?> role ? String.valueOf(role.getFirst()) : null;
        } catch (RuntimeException e) {
            return null;
        }
    }

    private boolean linkUp(Node replica) {
        try {
            return "up".equals(info(replica).get("master_link_status"));
        } catch (RuntimeException e) {
            return false;
        }
    }

    private Map<String, String> info(Node node) {
        Object reply = call(node, "INFO", "replication");
        return String.valueOf(reply).lines().filter(l -> l.contains(":"))
                .collect(Collectors.toMap(l -> l.substring(0, l.indexOf(':')), l -> l.substring(l.indexOf(':') + 1).strip(),
                        (a, b) -> b));
    }

    private static String field(List<?> flat, String name) {
        for (int i = 0; i + 1 < flat.size(); i += 2) {
            if (name.equals(String.valueOf(flat.get(i)))) {
                return String.valueOf(flat.get(i + 1));
            }
        }
        return null;
    }

    private Node node(int port) {
        return nodes.stream().filter(n -> n.port == port).findFirst()
                .orElseThrow(() -> new IllegalStateException("the sentinels name an unknown primary on port " + port));
    }

    private void awaitPong(Node node) {
        await(Duration.ofSeconds(20), () -> {
            if (!node.alive()) {
                throw new IllegalStateException("redis-server on port " + node.port + " exited at start; see " + node.dir);
            }
            try {
                return "PONG".equals(Resp.call(HOST, node.port, "PING"));
            } catch (RuntimeException e) {
                return false;
            }
        }, () -> "Redis on port " + node.port + " did not answer PING");
    }

    private static void await(Duration timeout, BooleanSupplier condition, java.util.function.Supplier<String> failure) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(failure.get() + " (within " + timeout + ")");
            }
            RedisServer.sleep(50);
        }
    }

    private static void waitFor(Process p) {
        try {
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String redisServer() {
        return RedisServer.findRedisServer();
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
