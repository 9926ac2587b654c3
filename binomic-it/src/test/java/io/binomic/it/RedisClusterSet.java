package io.binomic.it;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A Redis Cluster of 3 masters and 3 replicas, all {@code redis-server} processes on loopback
 * ports, joined by {@code redis-cli --cluster create ... --cluster-replicas 1} (no Docker: the nodes
 * announce their own addresses, which a client outside a container could not reach). Persistence
 * is off; {@code nodes.conf} is kept, so a killed node started again rejoins as a replica of the
 * one promoted in its place. {@link #shared()} is one cluster for the whole test JVM (tests keep
 * apart by queue names); destructive tests {@link #start()} their own. Node timeout is 1 s, so a
 * killed master's replica is promoted within a few seconds.
 */
public final class RedisClusterSet implements AutoCloseable {
    private static final String HOST = "127.0.0.1";
    private static final Duration READY = Duration.ofSeconds(40);
    private static final int NODE_TIMEOUT_MILLIS = 1000;
    private static RedisClusterSet shared;
    private static RuntimeException sharedFailure;

    private final Path dir;
    private final List<Node> nodes = new ArrayList<>();

    /** One node; its port never changes, its role may. */
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

        /** {@code redis://127.0.0.1:<port>}. */
        public String address() {
            return "redis://" + HOST + ":" + port;
        }

        public boolean alive() {
            return process != null && process.isAlive();
        }

        /** The process id, to read its CPU time. */
        public long pid() {
            return process.pid();
        }

        @Override
        public String toString() {
            return HOST + ":" + port;
        }
    }

    private RedisClusterSet(Path dir) {
        this.dir = dir;
    }

    /** One cluster for the whole test JVM, started on first use, stopped (and its files deleted) at JVM exit. */
    public static synchronized RedisClusterSet shared() {
        if (sharedFailure != null) {
            throw new IllegalStateException("the shared Redis Cluster failed to start earlier in this JVM", sharedFailure);
        }
        if (shared == null) {
            try {
                shared = start();
            } catch (RuntimeException e) {
                sharedFailure = e;
                throw e;
            }
        }
        return shared;
    }

    /** A new cluster of 3 masters with one replica each, every slot covered, stopped at JVM exit at the latest. */
    public static RedisClusterSet start() {
        RedisClusterSet set;
        try {
            set = new RedisClusterSet(Files.createTempDirectory("binomic-cluster-"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Runtime.getRuntime().addShutdownHook(new Thread(set::close));
        try {
            for (int port : freePorts(6)) {
                set.startNode(port);
            }
            List<String> create = new ArrayList<>(List.of(redisCli(), "--cluster", "create"));
            set.nodes.forEach(n -> create.add(n.toString()));
            create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
            String out = run(create, Duration.ofSeconds(60));
            if (!out.contains("[OK] All 16384 slots covered")) {
                throw new IllegalStateException("redis-cli --cluster create failed:\n" + out);
            }
            set.awaitHealthy();
            return set;
        } catch (RuntimeException | Error e) {
            set.stopNodes(); // the logs stay in the directory the message names
            throw e;
        }
    }

    /**
     * A Redisson YAML file ({@code clusterServersConfig}) for this cluster: what a user passes as
     * broker option {@code redisson.config}. Reads go to the masters.
     */
    public Path writeRedissonYaml() {
        StringBuilder yaml = new StringBuilder("clusterServersConfig:\n  readMode: \"MASTER\"\n  scanInterval: 500\n"
                + "  nodeAddresses:\n");
        nodes.stream().filter(Node::alive).forEach(n -> yaml.append("    - \"").append(n.address()).append("\"\n"));
        Path file = dir.resolve("redisson-cluster-" + System.nanoTime() + ".yaml");
        try {
            Files.writeString(file, yaml);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return file;
    }

    /** {@code redis+cluster://127.0.0.1:p1,127.0.0.1:p2,...}: the seed nodes as one broker URL. */
    public String url() {
        return "redis+cluster://" + nodes.stream().filter(Node::alive).map(Node::toString).collect(Collectors.joining(","));
    }

    public List<Node> nodes() {
        return List.copyOf(nodes);
    }

    /** The live masters, by port. */
    public List<Node> masters() {
        return nodes.stream().filter(n -> n.alive() && "master".equals(role(n))).sorted(Comparator.comparingInt(Node::port)).toList();
    }

    /** The live replica of {@code master}. */
    public Node replicaOf(Node master) {
        return nodes.stream().filter(n -> n.alive() && Resp.call(HOST, n.port, "ROLE") instanceof List<?> role
                && "slave".equals(String.valueOf(role.getFirst())) && String.valueOf(role.get(2)).equals(Integer.toString(master.port)))
                .findFirst().orElseThrow(() -> new IllegalStateException(master + " has no live replica"));
    }

    /** The master that serves {@code key}'s slot now. */
    public Node masterOf(String key) {
        long slot = slotOf(key);
        for (Node m : masters()) {
            if (ownedSlots(m).stream().anyMatch(r -> r[0] <= slot && slot <= r[1])) {
                return m;
            }
        }
        throw new IllegalStateException("no master serves slot " + slot + " of " + key);
    }

    /** {@code CLUSTER KEYSLOT}. */
    public long slotOf(String key) {
        return (Long) call(masters().getFirst(), "CLUSTER", "KEYSLOT", key);
    }

    /** One raw command to a node. */
    public Object call(Node node, String... args) {
        Object reply = Resp.call(HOST, node.port, args);
        if (reply instanceof Resp.Error e) {
            throw new IllegalStateException("Redis " + node + " replied " + e.message() + " to " + List.of(args));
        }
        return reply;
    }

    /** {@code INFO <section>} of a node as a map. */
    public Map<String, String> info(Node node, String section) {
        return parse(call(node, "INFO", section));
    }

    /** {@code CLUSTER INFO} of a node as a map. */
    public Map<String, String> clusterInfo(Node node) {
        return parse(call(node, "CLUSTER", "INFO"));
    }

    private static Map<String, String> parse(Object infoText) {
        return String.valueOf(infoText).lines().filter(l -> l.contains(":"))
                .collect(Collectors.toMap(l -> l.substring(0, l.indexOf(':')), l -> l.substring(l.indexOf(':') + 1).strip(),
                        (a, b) -> b, LinkedHashMap::new));
    }

    /** Calls of one command on a node so far ({@code INFO commandstats}), 0 if never called. */
    public long calls(Node node, String command) {
        String stat = info(node, "commandstats").get("cmdstat_" + command.toLowerCase());
        if (stat == null) {
            return 0;
        }
        return Long.parseLong(stat.substring(stat.indexOf("calls=") + 6, stat.indexOf(',')));
    }

    /** Error replies of one kind ({@code INFO errorstats}, e.g. {@code CROSSSLOT}) summed over the live nodes. */
    public long errors(String prefix) {
        long sum = 0;
        for (Node n : nodes) {
            if (n.alive()) {
                String stat = info(n, "errorstats").get("errorstat_" + prefix);
                if (stat != null) {
                    sum += Long.parseLong(stat.substring(stat.indexOf("count=") + 6));
                }
            }
        }
        return sum;
    }

    /**
     * SIGKILLs the master serving {@code key} and returns once its replica has been promoted and every
     * slot is served again.
     */
    public Node killMasterOf(String key) {
        Node old = masterOf(key);
        kill(old);
        await(READY, () -> {
            try {
                return masters().size() == 3 && masters().stream().allMatch(m -> "ok".equals(clusterInfo(m).get("cluster_state")))
                        && masterOf(key) != old;
            } catch (RuntimeException notYet) {
                return false;
            }
        }, () -> "no replica was promoted after " + old + " was killed; logs in " + dir);
        return old;
    }

    /**
     * SIGSTOPs the master serving {@code key} until its replica has been promoted, then SIGCONTs it:
     * a master cut off rather than dead, which wakes with commands queued on its sockets, finds
     * itself replaced and becomes the new master's replica. Returns once it is linked as such and
     * every slot is served.
     */
    public Node freezeMasterOf(String key) {
        Node old = masterOf(key);
        Node replica = replicaOf(old);
        ChildWorker.signal(old.pid(), "STOP");
        try {
            await(READY, () -> "master".equals(role(replica)), () -> "no replica was promoted while " + old + " was frozen; logs in " + dir);
        } finally {
            ChildWorker.signal(old.pid(), "CONT");
        }
        await(READY, () -> {
            try {
                return "slave".equals(role(old)) && "up".equals(info(old, "replication").get("master_link_status"));
            } catch (RuntimeException notYet) {
                return false;
            }
        }, () -> old + " did not come back as a replica after it was thawed; see " + old.dir);
        awaitHealthy();
        return old;
    }

    /** SIGKILL, without waiting for the cluster. */
    public void kill(Node node) {
        if (node.process == null) {
            return;
        }
        node.process.destroyForcibly();
        waitFor(node.process);
    }

    /** Starts a killed node again: with its {@code nodes.conf} it rejoins as a replica, empty, and syncs. */
    public void rejoin(Node node) {
        if (node.alive()) {
            throw new IllegalStateException(node + " is running");
        }
        launch(node);
        awaitPong(node);
        await(READY, () -> "slave".equals(role(node)) && "up".equals(info(node, "replication").get("master_link_status")),
                () -> node + " did not rejoin as a replica; see " + node.dir);
    }

    /**
     * How many slots {@code redis-cli --cluster reshard} must move from the master of {@code key} so
     * that the key's slot is among them: it takes a source's slots in ascending order.
     */
    public int slotsToReshardFor(String key) {
        Node from = masterOf(key);
        long lowest = ownedSlots(from).stream().mapToLong(r -> r[0]).min().orElseThrow();
        return Math.toIntExact(slotOf(key) - lowest + 1);
    }

    /**
     * {@code redis-cli --cluster reshard}: moves the lowest {@code count} slots of the master of
     * {@code key} to another master, keys and all ({@code SETSLOT IMPORTING/MIGRATING}, {@code MIGRATE},
     * {@code SETSLOT NODE}), while clients get {@code ASK} and then {@code MOVED}; returns the receiver.
     */
    public Node reshardFrom(String key, int count) {
        Node from = masterOf(key);
        Node to = masters().stream().filter(m -> m != from).findFirst().orElseThrow();
        List<String> command = List.of(redisCli(), "--cluster", "reshard", from.toString(),
                "--cluster-from", nodeId(from), "--cluster-to", nodeId(to), "--cluster-slots", Integer.toString(count),
                "--cluster-yes");
        String out = run(command, Duration.ofMinutes(2));
        if (out.contains("[ERR]")) {
            throw new IllegalStateException("redis-cli --cluster reshard failed:\n" + out);
        }
        awaitHealthy();
        return to;
    }

    private String nodeId(Node node) {
        return String.valueOf(call(node, "CLUSTER", "MYID"));
    }

    @Override
    public synchronized void close() {
        stopNodes();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | UncheckedIOException gone) {
            // best effort
        }
    }

    private synchronized void stopNodes() {
        for (Node n : nodes) {
            if (n.process != null) {
                n.process.destroyForcibly();
            }
        }
        for (Node n : nodes) {
            if (n.process != null) {
                waitFor(n.process);
            }
        }
    }

    // ---- start-up ------------------------------------------------------------------------

    private void startNode(int port) {
        Path nodeDir = dir.resolve("node-" + port);
        try {
            Files.createDirectories(nodeDir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Node node = new Node(port, nodeDir);
        nodes.add(node);
        launch(node);
        awaitPong(node);
    }

    private void launch(Node node) {
        List<String> command = List.of(RedisServer.findRedisServer(), "--port", Integer.toString(node.port), "--bind", HOST,
                "--save", "", "--appendonly", "no", "--dir", node.dir.toString(),
                "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", Integer.toString(NODE_TIMEOUT_MILLIS),
                "--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", "--repl-ping-replica-period", "1");
        try {
            // Never inheritIO inside surefire: a child writing to our stdout corrupts its channel.
            node.process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(node.dir.resolve("redis.log").toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
    }

    /** Every live node says cluster_state ok, agrees all slots are served, and every replica is linked. */
    private void awaitHealthy() {
        await(READY, () -> {
            try {
                for (Node n : nodes) {
                    if (!n.alive()) {
                        continue;
                    }
                    Map<String, String> cluster = clusterInfo(n);
                    Map<String, String> replication = info(n, "replication");
                    if (!"ok".equals(cluster.get("cluster_state")) || !"16384".equals(cluster.get("cluster_slots_ok"))) {
                        return false;
                    }
                    if ("slave".equals(replication.get("role")) && !"up".equals(replication.get("master_link_status"))) {
                        return false;
                    }
                    String nodesText = String.valueOf(call(n, "CLUSTER", "NODES"));
                    if (nodesText.contains("handshake") || nodesText.contains("noaddr")
                            || nodesText.contains("migrating") || nodesText.contains("importing") || nodesText.contains("->-")
                            || nodesText.contains("-<-")) {
                        return false;
                    }
                }
                return true;
            } catch (RuntimeException notYet) {
                return false;
            }
        }, () -> "the cluster did not become healthy; logs in " + dir);
    }

    private List<long[]> ownedSlots(Node master) {
        List<long[]> ranges = new ArrayList<>();
        String myself = String.valueOf(call(master, "CLUSTER", "NODES")).lines().filter(l -> l.contains("myself")).findFirst()
                .orElseThrow();
        String[] parts = myself.split(" ");
        for (int i = 8; i < parts.length; i++) {
            String p = parts[i];
            if (p.startsWith("[")) {
                continue;
            }
            int dash = p.indexOf('-');
            long a = Long.parseLong(dash < 0 ? p : p.substring(0, dash));
            long b = dash < 0 ? a : Long.parseLong(p.substring(dash + 1));
            ranges.add(new long[] {a, b});
        }
        return ranges;
    }

    private String role(Node node) {
        try {
            return Resp.call(HOST, node.port, "ROLE") instanceof List<?> role ? String.valueOf(role.getFirst()) : null;
        } catch (RuntimeException e) {
            return null;
        }
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

    private static void await(Duration timeout, BooleanSupplier condition, Supplier<String> failure) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(failure.get() + " (within " + timeout + ")");
            }
            RedisServer.sleep(50);
        }
    }

    private static String run(List<String> command, Duration timeout) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getOutputStream().close();
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(command + " did not finish within " + timeout);
            }
            return new String(out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    static String redisCli() {
        Path server = Path.of(RedisServer.findRedisServer());
        Path cli = server.resolveSibling("redis-cli");
        return Files.isExecutable(cli) ? cli.toString() : "redis-cli";
    }

    private static void waitFor(Process p) {
        try {
            p.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Free ports whose cluster bus ports (port + 10000) are free too. */
    private static List<Integer> freePorts(int n) {
        List<Integer> ports = new ArrayList<>();
        while (ports.size() < n) {
            int p = ThreadLocalRandom.current().nextInt(20000, 30000);
            if (!ports.contains(p) && free(p) && free(p + 10000)) {
                ports.add(p);
            }
        }
        return ports;
    }

    private static boolean free(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort() == port;
        } catch (IOException e) {
            return false;
        }
    }
}
