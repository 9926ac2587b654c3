package io.binomic.it.process;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Records job executions in Redis itself, so that executions in every worker JVM (including
 * killed ones) add up in one place: {@code <name>:started} (a list of job numbers, one entry per
 * execution) and {@code <name>:done} (the set of jobs that completed). Speaks raw RESP over a
 * socket, independent of the broker under test.
 *
 * @param host Redis host
 * @param port Redis port
 * @param name the ledger's name (the test's queue)
 */
record Ledger(String host, int port, String name) {

    /** {@code host:port:name}, for a worker JVM's system property. */
    String spec() {
        return host + ":" + port + ":" + name;
    }

    static Ledger parse(String spec) {
        String[] parts = spec.split(":", 3);
        return new Ledger(parts[0], Integer.parseInt(parts[1]), parts[2]);
    }

    void started(int job) {
        call("RPUSH", name + ":started", Integer.toString(job));
    }

    void done(int job) {
        call("SADD", name + ":done", Integer.toString(job));
    }

    Set<Integer> doneJobs() {
        Set<Integer> done = new HashSet<>();
        for (Object member : (List<?>) call("SMEMBERS", name + ":done")) {
            done.add(Integer.parseInt((String) member));
        }
        return done;
    }

    /** Job numbers in the order their executions started; a job run twice appears twice. */
    List<Integer> executions() {
        return ((List<?>) call("LRANGE", name + ":started", "0", "-1")).stream().map(o -> Integer.parseInt((String) o)).toList();
    }

    private Object call(String... args) {
        try (Socket socket = new Socket(host, port)) {
            OutputStream out = socket.getOutputStream();
            StringBuilder command = new StringBuilder("*" + args.length + "\r\n");
            for (String arg : args) {
                command.append('$').append(arg.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(arg).append("\r\n");
            }
            out.write(command.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            return read(new BufferedInputStream(socket.getInputStream()));
        } catch (IOException e) {
            throw new UncheckedIOException("ledger " + name + ": " + String.join(" ", args), e);
        }
    }

    private static Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        return switch (type) {
            case '+' -> line;
            case ':' -> Long.parseLong(line);
            case '$' -> {
                int length = Integer.parseInt(line);
                if (length < 0) {
                    yield null;
                }
                String value = new String(in.readNBytes(length), StandardCharsets.UTF_8);
                in.readNBytes(2);
                yield value;
            }
            case '*' -> {
                List<Object> items = new ArrayList<>();
                for (int i = Integer.parseInt(line); i > 0; i--) {
                    items.add(read(in));
                }
                yield items;
            }
            default -> throw new IOException("Redis error or unexpected reply: " + (char) type + line);
        };
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder line = new StringBuilder();
        for (int c = in.read(); c != '\r'; c = in.read()) {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            line.append((char) c);
        }
        in.read();
        return line.toString();
    }
}
