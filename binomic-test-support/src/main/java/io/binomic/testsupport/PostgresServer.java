package io.binomic.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A PostgreSQL server of the test's own, from Debian's {@code postgresql} package: a fresh cluster
 * ({@code initdb}) in a temp directory, on a free loopback port, trust authentication, fsync off,
 * stopped and deleted by {@link #close()}. {@code initdb} and {@code pg_ctl} refuse to run as root,
 * so as root they run as {@code nobody} (through {@code runuser}), who owns the directory.
 */
public final class PostgresServer implements AutoCloseable {
    private static final String HOST = "127.0.0.1";
    private final Path bin;
    private final Path dir;
    private final int port;
    private final boolean asNobody;

    private PostgresServer(Path bin, Path dir, int port, boolean asNobody) {
        this.bin = bin;
        this.dir = dir;
        this.port = port;
        this.asNobody = asNobody;
    }

    /** Creates a cluster and starts it; fails with how to install PostgreSQL when the package is missing. */
    public static PostgresServer startNew() {
        Path bin = findBin();
        try {
            Path dir = Files.createTempDirectory("binomic-pg-");
            boolean root = "root".equals(System.getProperty("user.name"));
            if (root) {
                UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
                UserPrincipal nobody = users.lookupPrincipalByName("nobody");
                Files.setOwner(dir, nobody);
            }
            PostgresServer server = new PostgresServer(bin, dir, freePort(), root);
            server.run(List.of(bin.resolve("initdb").toString(), "-D", dir.resolve("data").toString(), "-U", "postgres",
                    "-A", "trust", "--no-sync", "-E", "UTF8"));
            server.start();
            return server;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static Path findBin() {
        Path root = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(root)) {
            try (Stream<Path> versions = Files.list(root)) {
                Path newest = versions.filter(p -> Files.isExecutable(p.resolve("bin/initdb")))
                        .max(Comparator.comparing(p -> Integer.parseInt(p.getFileName().toString().replaceAll("\\D", "0")))).orElse(null);
                if (newest != null) {
                    return newest.resolve("bin");
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        throw new IllegalStateException("PostgreSQL's initdb is missing (looked under /usr/lib/postgresql/*/bin): install Debian's"
                + " postgresql package (apt-get install postgresql), as .ci/run does");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Starts (or restarts) the server; returns when it accepts connections. */
    public void start() {
        run(List.of(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-l", dir.resolve("log").toString(), "-w",
                "-t", "60", "-o", "-p " + port + " -k " + dir + " -c listen_addresses=" + HOST + " -c fsync=off"
                        + " -c synchronous_commit=off -c full_page_writes=off -c max_connections=50", "start"));
    }

    /** Stops the server at once (connections dropped, no checkpoint: a crash as far as clients see). */
    public void stop() {
        run(List.of(bin.resolve("pg_ctl").toString(), "-D", dir.resolve("data").toString(), "-m", "immediate", "-w", "stop"));
    }

    public String jdbcUrl() {
        return "jdbc:postgresql://" + HOST + ":" + port + "/postgres?user=postgres";
    }

    public int port() {
        return port;
    }

    public Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl());
    }

    private void run(List<String> command) {
        List<String> full = new ArrayList<>();
        if (asNobody) {
            full.addAll(List.of("runuser", "-u", "nobody", "--"));
        }
        full.addAll(command);
        try {
            Path out = Files.createTempFile("binomic-pg-cmd-", ".log");
            Process p = new ProcessBuilder(full).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.to(out.toFile())).start();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", full) + " did not finish within 120 s: " + Files.readString(out));
            }
            String output = Files.readString(out);
            Files.deleteIfExists(out);
            if (p.exitValue() != 0) {
                String log = Files.exists(dir.resolve("log")) ? Files.readString(dir.resolve("log")) : "";
                throw new IllegalStateException(String.join(" ", full) + " exited with " + p.exitValue() + ": " + output + "\n" + log);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + full, e);
        }
    }

    @Override
    public void close() {
        try {
            stop();
        } catch (RuntimeException e) {
            // Deleted below either way; a server that would not stop is reported by the test that used it.
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
