package io.binomic.it;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A tiny RESP2 client, so tests can look at Redis (and damage it: raw XADD, CLIENT KILL)
 * independently of the broker under test. One command per connection: simple and never stale.
 */
final class Resp {
    private Resp() { }

    /** An error reply. */
    record Error(String message) { }

    /** Sends one command; returns String, Long, List (nested), null or {@link Error}. */
    static Object call(String host, int port, String... args) {
        byte[][] bytes = new byte[args.length][];
        for (int i = 0; i < args.length; i++) {
            bytes[i] = args[i].getBytes(StandardCharsets.UTF_8);
        }
        return call(host, port, bytes);
    }

    /** {@link #call(String, int, String...)} with arguments as raw bytes (which need not be UTF-8). */
    static Object call(String host, int port, byte[]... args) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 2000);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            ByteArrayOutputStream request = new ByteArrayOutputStream();
            request.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
            for (byte[] b : args) {
                request.writeBytes(("$" + b.length + "\r\n").getBytes(StandardCharsets.UTF_8));
                request.writeBytes(b);
                request.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
            }
            out.write(request.toByteArray());
            out.flush();
            return read(new BufferedInputStream(socket.getInputStream()));
        } catch (IOException e) {
            throw new UncheckedIOException("Redis command " + java.util.Arrays.stream(args).map(a -> new String(a, StandardCharsets.UTF_8)).toList() + " at " + host + ":" + port + " failed", e);
        }
    }

    private static Object read(InputStream in) throws IOException {
        int type = in.read();
        String line = line(in);
        return switch (type) {
            case '+' -> line;
            case '-' -> new Error(line);
            case ':' -> Long.parseLong(line);
            case '$' -> {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    yield null;
                }
                byte[] b = in.readNBytes(n);
                line(in);
                yield new String(b, StandardCharsets.UTF_8);
            }
            case '*' -> {
                int n = Integer.parseInt(line);
                if (n < 0) {
                    yield null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(read(in));
                }
                yield items;
            }
            case -1 -> throw new IOException("connection closed by Redis");
            default -> throw new IOException("unexpected RESP type '" + (char) type + "'");
        };
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\r') {
            if (c == -1) {
                throw new IOException("connection closed by Redis");
            }
            b.write(c);
        }
        in.read(); // \n
        return b.toString(StandardCharsets.UTF_8);
    }
}
