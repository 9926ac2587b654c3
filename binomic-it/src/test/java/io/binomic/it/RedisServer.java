package io.binomic.it;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;

/**
 * A real Redis for tests: a {@code redis:7-alpine} container when a Docker engine is available,
 * otherwise the {@code redis-server} binary on a free loopback port with persistence off. It can
 * be stopped and started again on the same port with its data kept ({@code SHUTDOWN SAVE}, then
 * the dump is loaded at start), which is how the Redis-restart fault test works. With neither
 * Docker nor redis-server, tests fail with the way to fix it: they are never skipped.
 */
public final class RedisServer implements AutoCloseable {
    private static final String HOST = "127.0.0.1";
    private static RedisServer shared;

    private final int port;
    private final List<String> extraArgs;
    private final Path dir;
    private GenericContainer<?> container;
    private Process process;

    private RedisServer(int port, List<String> extraArgs, Path dir) {
        this.port = port;
        this.extraArgs = extraArgs;
        this.dir = dir;
    }

    /**
     * Freezes the server for {@code d} (SIGSTOP, then SIGCONT; a paused container with Docker):
     * connections stay open and commands sent meanwhile wait, as in a network partition or a
     * paused VM, unlike a stop, where connections are refused.
     */
    public void freezeFor(java.time.Duration d) {
        freeze();
        try {
            sleep(d.toMillis());
        } finally {
            thaw();
        }
    }

    /** Freezes the server as {@link #freezeFor} does, until {@link #thaw()}: for a test that knows when it is done. */
    public void freeze() {
        if (container != null) {
            container.getDockerClient().pauseContainerCmd(container.getContainerId()).exec();
            return;
        }
        signal("STOP");
    }

    /** Ends a {@link #freeze()}: the commands that waited are answered. */
    public void thaw() {
        if (container != null) {
            container.getDockerClient().unpauseContainerCmd(container.getContainerId()).exec();
            return;
        }
        signal("CONT");
    }

    private void signal(String name) {
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
            if (kill.waitFor() != 0) {
                throw new IllegalStateException("kill -" + name + " of redis-server " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** One server for the whole test JVM; tests keep apart by using fresh queue names. */
    public static synchronized RedisServer shared() {
        if (shared == null) {
            shared = startNew();
            Runtime.getRuntime().addShutdownHook(new Thread(shared::close));
        }
        return shared;
    }

    /**
     * A server of its own (for tests that restart it or change its settings); close it after. A
     * free port can be taken by another test JVM's server between the probe and the bind (test
     * classes run in parallel forks): then it starts again on another.
     */
    public static RedisServer startNew(String... extraArgs) {
        for (int tries = 1; ; tries++) {
            RedisServer server;
            try {
                server = new RedisServer(freePort(), List.of(extraArgs), Files.createTempDirectory("binomic-redis-"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            try {
                server.start();
                return server;
            } catch (PortTakenException e) {
                server.close();
                if (tries == 3) {
                    throw e;
                }
            }
        }
    }

    /**
     * A server on a free port, not started yet: a client given its {@link #url()} finds nothing
     * there until {@link #start()} (for a client that starts before Redis does). Close it after.
     */
    public static RedisServer notStarted() {
        try {
            return new RedisServer(freePort(), List.of(), Files.createTempDirectory("binomic-redis-"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The port answered, but not from the redis-server this object started. */
    private static final class PortTakenException extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        PortTakenException(String message) {
            super(message);
        }
    }

    public String host() {
        return HOST;
    }

    public int port() {
        return port;
    }

    /** {@code redis://127.0.0.1:<port>}. */
    public String url() {
        return "redis://" + HOST + ":" + port;
    }

    /** Starts (or restarts) the server on its port; returns when it answers PING. */
    public synchronized void start() {
        if (useDocker()) {
            startContainer();
        } else {
            startBinary();
        }
        awaitPong(Duration.ofSeconds(20));
    }

    /** Stops the server, saving its data so that {@link #start()} brings it back. */
    public synchronized void stop() {
        try {
            Resp.call(HOST, port, "SHUTDOWN", "SAVE");
        } catch (UncheckedIOException expected) {
            // SHUTDOWN closes the connection without a reply.
        }
        if (process != null) {
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly().waitFor();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (container != null) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (Boolean.TRUE.equals(container.getDockerClient().inspectContainerCmd(container.getContainerId())
                    .exec().getState().getRunning()) && System.nanoTime() < deadline) {
                sleep(100);
            }
        }
    }

    /** Closes every normal client connection, as a network blip or a proxy restart would. Returns how many. */
    public long killClients() {
        return (Long) Resp.call(HOST, port, "CLIENT", "KILL", "TYPE", "normal");
    }

    /** Sends one raw command. */
    public Object call(String... args) {
        Object reply = Resp.call(HOST, port, args);
        if (reply instanceof Resp.Error e) {
            throw new IllegalStateException("Redis replied " + e.message() + " to " + List.of(args));
        }
        return reply;
    }

    /** Sends one raw command whose arguments are bytes (which need not be UTF-8). */
    public Object callBytes(byte[]... args) {
        Object reply = Resp.call(HOST, port, args);
        if (reply instanceof Resp.Error e) {
            throw new IllegalStateException("Redis replied " + e.message() + " to " + java.util.Arrays.stream(args).map(a -> new String(a, StandardCharsets.UTF_8)).toList());
        }
        return reply;
    }

    @Override
    public synchronized void close() {
        if (container != null) {
            container.stop();
            container = null;
        }
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
        }
    }

    private static boolean dockerChecked;
    private static boolean dockerAvailable;

    private static synchronized boolean useDocker() {
        if (!dockerChecked) {
            dockerChecked = true;
            try {
                dockerAvailable = DockerClientFactory.instance().isDockerAvailable();
            } catch (RuntimeException | LinkageError e) {
                dockerAvailable = false;
            }
        }
        return dockerAvailable;
    }

    private void startContainer() {
        if (container == null) {
            container = new GenericContainer<>("redis:7-alpine")
                    .withCommand("redis-server", "--save", "", "--appendonly", "no")
                    .withExposedPorts(6379)
                    // A fixed host port: after a restart clients must find Redis where it was.
                    .withCreateContainerCmdModifier(cmd -> cmd.getHostConfig().withPortBindings(
                            com.github.dockerjava.api.model.PortBinding.parse(HOST + ":" + port + ":6379")));
            if (!extraArgs.isEmpty()) {
                List<String> command = new ArrayList<>(List.of("redis-server", "--save", "", "--appendonly", "no"));
                command.addAll(extraArgs);
                container.withCommand(command.toArray(String[]::new));
            }
            container.start();
        } else {
            container.getDockerClient().startContainerCmd(container.getContainerId()).exec();
        }
    }

    private void startBinary() {
        String binary = findRedisServer();
        List<String> command = new ArrayList<>(List.of(binary, "--port", Integer.toString(port), "--bind", HOST,
                "--save", "", "--appendonly", "no", "--dir", dir.toString(), "--dbfilename", "dump.rdb"));
        command.addAll(extraArgs);
        try {
            // Never inheritIO inside surefire: a child writing to our stdout corrupts its channel.
            process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("redis.log").toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + command, e);
        }
    }

    /** The redis-server binary on the PATH or in the usual places; the message of its absence says how to install it. */
    static String findRedisServer() {
        for (String dirName : System.getenv().getOrDefault("PATH", "/usr/bin").split(File.pathSeparator)) {
            File candidate = new File(dirName, "redis-server");
            if (candidate.canExecute()) {
                return candidate.getPath();
            }
        }
        for (String fixed : List.of("/usr/bin/redis-server", "/usr/local/bin/redis-server")) {
            if (new File(fixed).canExecute()) {
                return fixed;
            }
        }
        throw new IllegalStateException("The integration tests need a real Redis: no Docker engine is reachable and no"
                + " redis-server binary is on the PATH. Install it (Debian/Ubuntu: sudo apt-get install redis-server;"
                + " macOS: brew install redis) or start Docker, then run the build again.");
    }

    private void awaitPong(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        RuntimeException last = null;
        while (System.nanoTime() < deadline) {
            if (process != null && !process.isAlive()) {
                String message = "redis-server exited at start with code " + process.exitValue() + "; see " + dir.resolve("redis.log");
                throw log().contains("Address already in use") ? new PortTakenException(message) : new IllegalStateException(message);
            }
            try {
                Object reply = Resp.call(HOST, port, "PING");
                if (reply instanceof Resp.Error(String m) && m.startsWith("NOAUTH")) {
                    return; // a password-protected server is up too
                }
                if ("PONG".equals(reply)) {
                    checkItIsOurs();
                    return;
                }
            } catch (RuntimeException e) {
                last = e;
            }
            sleep(50);
        }
        throw new IllegalStateException("Redis on port " + port + " did not answer PING within " + timeout, last);
    }

    private String log() {
        try {
            return Files.readString(dir.resolve("redis.log"));
        } catch (IOException e) {
            return "";
        }
    }

    /** Another test JVM's server on this port answers PING as well as this one would. */
    private void checkItIsOurs() {
        if (process == null) {
            return;
        }
        String info = String.valueOf(Resp.call(HOST, port, "INFO", "server"));
        if (!info.contains("process_id:" + process.pid() + "\r\n")) {
            throw new PortTakenException("port " + port + " is served by another redis-server than pid " + process.pid());
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Kills the server with SIGKILL, as a crash would: nothing is saved on the way out, so
     * {@link #start()} brings back only what it had written to disk (its append-only file, when
     * it was started with {@code --appendonly yes}).
     */
    public synchronized void crash() {
        if (container != null) {
            container.getDockerClient().killContainerCmd(container.getContainerId()).exec();
            return;
        }
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
