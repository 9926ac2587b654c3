package io.binomic.core.internal.web;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The HTTP server behind {@code /metrics} and the dashboard pages, on the JDK's own
 * {@code jdk.httpserver}: no dependency, one virtual thread per exchange.
 */
public final class DashboardServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DashboardServer.class.getName());
    /** Cookie a browser keeps after opening the dashboard once with {@code ?token=}. */
    static final String TOKEN_COOKIE = "binomic_dashboard_token";

    /**
     * How the server listens.
     *
     * @param bind the address; loopback unless a token is given
     * @param port the port, 0 for any free one
     * @param token the secret every request must show; null on loopback for none
     * @param readOnly true to refuse every change (replay, purge, cancel, pause)
     */
    public record Settings(InetAddress bind, int port, String token, boolean readOnly) {
        public Settings {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("dashboard port must be 0..65535, was " + port);
            }
            if (token != null && token.length() < 16) {
                throw new IllegalArgumentException("dashboard token must have at least 16 characters, has " + token.length()
                        + "; use a random one, such as the output of 'openssl rand -hex 16'");
            }
            if (!bind.isLoopbackAddress() && token == null) {
                throw new IllegalArgumentException("a dashboard bound to " + bind.getHostAddress() + " is reachable from other"
                        + " hosts and needs a token: set one (at least 16 random characters), or bind to 127.0.0.1");
            }
        }
    }

    private final HttpServer server;
    private final ExecutorService executor;
    private final Settings settings;

    private DashboardServer(HttpServer server, ExecutorService executor, Settings settings) {
        this.server = server;
        this.executor = executor;
        this.settings = settings;
    }

    /** Starts serving {@code metrics} at {@code /metrics} and {@code pages} (may be null) at {@code /}. */
    public static DashboardServer start(Settings settings, java.util.function.Supplier<String> metrics, HttpHandler pages) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(settings.bind(), settings.port()), 50);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + settings.bind().getHostAddress() + ":" + settings.port()
                    + ": " + e.getMessage() + "; choose another port", e);
        }
        ExecutorService executor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("binomic-dashboard-", 0).factory());
        server.setExecutor(executor);
        server.createContext("/metrics", guarded(settings, exchange -> {
            if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
                send(exchange, 405, "text/plain; charset=utf-8", "use GET\n");
                return;
            }
            send(exchange, 200, PrometheusText.CONTENT_TYPE, metrics.get());
        }));
        if (pages != null) {
            server.createContext("/", guarded(settings, pages));
        }
        server.start();
        DashboardServer started = new DashboardServer(server, executor, settings);
        LOG.log(System.Logger.Level.INFO, "dashboard on {0}{1}", started.uri(), settings.readOnly() ? " (read-only)" : "");
        return started;
    }

    private static HttpHandler guarded(Settings settings, HttpHandler inner) {
        return exchange -> {
            try (exchange) {
                exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
                exchange.getResponseHeaders().set("X-Frame-Options", "DENY");
                exchange.getResponseHeaders().set("Referrer-Policy", "no-referrer");
                if (settings.token() != null && !authorised(settings.token(), exchange)) {
                    send(exchange, 401, "text/plain; charset=utf-8",
                            "this dashboard needs its token: send 'Authorization: Bearer <token>', or open it once with ?token=<token>\n");
                    return;
                }
                inner.handle(exchange);
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "dashboard request " + exchange.getRequestURI().getPath() + " failed", e);
                try {
                    send(exchange, 500, "text/plain; charset=utf-8", "internal error: see the server log\n");
                } catch (IOException | RuntimeException ignored) {
                    // headers were already sent
                }
            }
        };
    }

    private static boolean authorised(String token, HttpExchange exchange) {
        String auth = exchange.getRequestHeaders().getFirst("Authorization");
        if (auth != null && auth.startsWith("Bearer ") && same(token, auth.substring(7).strip())) {
            return true;
        }
        String cookies = exchange.getRequestHeaders().getFirst("Cookie");
        if (cookies != null) {
            for (String c : cookies.split(";")) {
                String[] kv = c.strip().split("=", 2);
                if (kv.length == 2 && kv[0].equals(TOKEN_COOKIE) && same(token, kv[1])) {
                    return true;
                }
            }
        }
        String query = exchange.getRequestURI().getRawQuery();
        if (query != null) {
            for (String part : query.split("&")) {
                if (part.startsWith("token=") && same(token, java.net.URLDecoder.decode(part.substring(6), StandardCharsets.UTF_8))) {
                    // Kept as an HttpOnly cookie, so the token leaves the address bar after the first page.
                    exchange.getResponseHeaders().add("Set-Cookie", TOKEN_COOKIE + "=" + token + "; Path=/; HttpOnly; SameSite=Strict");
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean same(String expected, String given) {
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
    }

    /** Sends a whole response. */
    public static void send(HttpExchange exchange, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", contentType);
        exchange.getResponseHeaders().set("Cache-Control", "no-store");
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(status, head ? -1 : bytes.length == 0 ? -1 : bytes.length);
        if (!head && bytes.length > 0) {
            exchange.getResponseBody().write(bytes);
        }
    }

    /** The address the server listens on (its actual port when 0 was asked). */
    public InetSocketAddress address() {
        return server.getAddress();
    }

    /** The server's base address, such as {@code http://127.0.0.1:9470/}. */
    public URI uri() {
        InetSocketAddress a = address();
        String host = a.getAddress().getHostAddress();
        return URI.create("http://" + (host.contains(":") ? "[" + host + "]" : host) + ":" + a.getPort() + "/");
    }

    /** The settings it was started with. */
    public Settings settings() {
        return settings;
    }

    /** Stops accepting, gives running exchanges a second, and stops. */
    @Override
    public void close() {
        server.stop(1);
        executor.close();
    }
}
