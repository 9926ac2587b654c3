package io.binomic.redis.internal;

import io.binomic.api.BrokerException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * One quick connection before Redisson starts: connect (TLS with hostname verification for
 * {@code rediss://}), AUTH if credentials are given, PING, SELECT of a database other than 0.
 * Redisson retries a refused connection or an auth error for its whole retry budget (which is
 * sized to survive a Redis restart) before it gives up; this check fails at once instead, with
 * the server's own words.
 */
final class Preflight {
    /** The start of the message when a redis:// URL names a node of a Redis Cluster. */
    static final String NODE_OF_A_CLUSTER = "this server is a node of a Redis Cluster, which a redis:// URL cannot use";

    /** The start of the message when the server accepted the connection but did not answer in time. */
    static final String NO_ANSWER = "no answer within ";
    /** The start of the message when a rediss:// server accepted the connection but did not answer the TLS handshake. */
    static final String NO_TLS_ANSWER = "no answer to the TLS handshake within ";
    /** Ends the {@link #NO_TLS_ANSWER} message when the port answers plain Redis instead. */
    static final String PLAIN_REDIS = ", and the port answers plain Redis (no TLS)";
    /** The start of the message when the server has no database of the URL's number. */
    static final String NO_DATABASE = "Redis refused database ";
    /** The start of the message when the server is no Redis. */
    static final String NOT_REDIS = "the server did not answer as Redis";

    private Preflight() { }

    /**
     * Throws the raw cause (IOException message or Redis error reply) as an {@link IllegalStateException}.
     * With {@code tls} (null for a plain connection) the server's certificate must be trusted and
     * issued for {@code host} (hostname verification, as HTTPS does it) before AUTH sends the
     * password: otherwise anyone who can take the address would receive it.
     */
    static void check(String host, int port, SSLContext tls, String username, String password, int database, Duration timeout) {
        int millis = Math.toIntExact(Math.max(1, timeout.toMillis()));
        try (Socket socket = connect(host, port, tls, millis)) {
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            if (password != null) {
                send(out, username == null ? new String[] {"AUTH", password} : new String[] {"AUTH", username, password});
                expectOk(in);
            }
            send(out, "PING");
            expectOk(in);
            send(out, "INFO", "cluster");
            if (reply(in).contains("cluster_enabled:1")) {
                // A single-server client would get MOVED for every key of the other masters' slots.
                throw new IllegalStateException(NODE_OF_A_CLUSTER + ": use redis+cluster://" + host + ":" + port
                        + "[,host:port...] (or a Redisson YAML file with clusterServersConfig)");
            }
            // Redisson would retry a database the server lacks for its whole budget, then report its channel and promise.
            if (database != 0) {
                send(out, "SELECT", Integer.toString(database));
                String selected = line(in);
                if (selected.startsWith("-")) {
                    throw new IllegalStateException(NO_DATABASE + database + " (" + selected.substring(1) + ")" + databases(out, in));
                }
            }
        } catch (HandshakeTimeout e) {
            // A plain Redis reads the ClientHello as the start of a command and waits for the rest, silently.
            throw new IllegalStateException(NO_TLS_ANSWER + timeout.toMillis() + " ms (BrokerConfig.connectTimeout)"
                    + (answersPlainRedis(host, port, millis) ? PLAIN_REDIS : ""), e.getCause());
        } catch (IOException e) {
            String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            throw new IllegalStateException(e instanceof SocketTimeoutException
                    ? NO_ANSWER + timeout.toMillis() + " ms (BrokerConfig.connectTimeout)" : message, e);
        }
    }

    /** How many databases the server has, as ": it has 16, 0-15", or nothing when it does not say (CONFIG refused). */
    private static String databases(OutputStream out, InputStream in) throws IOException {
        send(out, "CONFIG", "GET", "databases");
        String head = line(in);
        if (!head.equals("*2")) {
            return "";
        }
        reply(in);
        String count = reply(in);
        try {
            int n = Integer.parseInt(count.trim());
            return n > 0 ? ": it has " + n + ", 0-" + (n - 1) : "";
        } catch (NumberFormatException e) {
            return "";
        }
    }

    private static Socket connect(String host, int port, SSLContext tls, int millis) throws IOException {
        Socket plain = new Socket();
        try {
            plain.connect(new InetSocketAddress(host, port), millis);
            plain.setSoTimeout(millis);
            if (tls == null) {
                return plain;
            }
            SSLSocket socket = (SSLSocket) tls.getSocketFactory().createSocket(plain, host, port, true);
            SSLParameters parameters = socket.getSSLParameters();
            parameters.setEndpointIdentificationAlgorithm("HTTPS");
            socket.setSSLParameters(parameters);
            try {
                socket.startHandshake();
            } catch (SocketTimeoutException e) {
                throw new HandshakeTimeout(e);
            }
            return socket;
        } catch (IOException | RuntimeException e) {
            plain.close();
            throw e;
        }
    }

    /** The TLS handshake got no answer in time: told apart from a timeout of a command, which reads as a frozen server. */
    private static final class HandshakeTimeout extends IOException {
        private static final long serialVersionUID = 1L;

        HandshakeTimeout(SocketTimeoutException cause) {
            super(cause.getMessage(), cause);
        }
    }

    /** Whether a plain connection to the port gets a Redis reply to PING (+PONG, or an error such as -NOAUTH). */
    private static boolean answersPlainRedis(String host, int port, int millis) {
        try (Socket socket = connect(host, port, null, millis)) {
            send(socket.getOutputStream(), "PING");
            String reply = line(socket.getInputStream());
            return reply.startsWith("+") || reply.startsWith("-");
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    private static void send(OutputStream out, String... args) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
        for (String a : args) {
            byte[] bytes = a.getBytes(StandardCharsets.UTF_8);
            b.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
            b.writeBytes(bytes);
            b.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
        }
        out.write(b.toByteArray());
        out.flush();
    }

    /**
     * Reads one reply (a status, an error, or a bulk string), as text; an error reply (e.g. a user
     * whose ACL forbids INFO) is returned as is, not thrown.
     */
    private static String reply(InputStream in) throws IOException {
        String first = line(in);
        if (!first.startsWith("$")) {
            return first;
        }
        int length = Integer.parseInt(first.substring(1));
        if (length < 0) {
            return "";
        }
        byte[] body = in.readNBytes(length + 2);
        return new String(body, 0, Math.min(length, body.length), StandardCharsets.UTF_8);
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\n') {
            if (c == -1) {
                throw new IOException("the server closed the connection (is it Redis? is TLS expected: rediss://?)");
            }
            if (c != '\r') {
                line.write(c);
            }
        }
        return line.toString(StandardCharsets.UTF_8);
    }

    /**
     * Reads one reply line; an error reply ({@code -NOAUTH ...}) becomes the exception message. Anything but a
     * status ({@code +OK}, {@code +PONG}) is no Redis: an HTTP server answers a PING with a line and headers
     * that read as replies, and Redisson would then retry its whole budget, logging each attempt.
     */
    private static void expectOk(InputStream in) throws IOException {
        String reply = line(in);
        if (reply.startsWith("-")) {
            throw new BrokerException(reply.substring(1));
        }
        if (!reply.startsWith("+")) {
            String shown = reply.length() > 60 ? reply.substring(0, 60) + "..." : reply;
            throw new IllegalStateException(NOT_REDIS + " (its reply began '" + shown.replaceAll("\\p{Cntrl}", "?") + "')");
        }
    }
}
