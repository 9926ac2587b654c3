package io.binomic.core.internal.web;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The HTTP server behind {@code /metrics} and the dashboard pages, on the JDK's own
 * {@code jdk.httpserver}: no dependency, one virtual thread per exchange.
 */
public final class DashboardServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DashboardServer.class.getName());
    /** Cookie a browser keeps after opening the dashboard once with {@code ?token=}. */
    static final String TOKEN_COOKIE = "binomic_dashboard_token";
    /** A Host header naming loopback: 127.0.0.1, localhost or [::1], with an optional port and nothing else. */
    private static final Pattern LOOPBACK_HOST = Pattern.compile("(127\\.0\\.0\\.1|localhost|\\[::1\\])(:\\d{1,5})?");
    /** RFC 6750's b64token: what a Bearer header, a cookie and a query parameter all carry unchanged. */
    private static final Pattern TOKEN_CHARACTERS = Pattern.compile("[A-Za-z0-9._~+/=-]+");

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
            if (token != null && !TOKEN_CHARACTERS.matcher(token).matches()) {
                throw new IllegalArgumentException("dashboard token may hold only letters, digits and - . _ ~ + / = (it travels in"
                        + " an HTTP header, a cookie and a URL); use a random one, such as the output of 'openssl rand -hex 16'");
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
    public static DashboardServer start(Settings settings, Supplier<String> metrics, HttpHandler pages) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(settings.bind(), settings.port()), 50);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + settings.bind().getHostAddress() + ":" + settings.port()
                    + ": " + e.getMessage() + "; choose another port", e);
        }
        // Platform threads: handlers that keep every virtual-thread carrier busy (CPU-bound tasks are
        // not time-sliced) must not make the dashboard and /metrics time out when they matter most.
        ExecutorService executor = Executors.newThreadPerTaskExecutor(Thread.ofPlatform().daemon().name("binomic-dashboard-", 0).factory());
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
        LOG.log(System.Logger.Level.INFO, "dashboard on {0}", announcement(started.uri(), settings.readOnly()));
        return started;
    }

    private static HttpHandler guarded(Settings settings, HttpHandler inner) {
        return exchange -> {
            try {
                exchange.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
                exchange.getResponseHeaders().set("X-Frame-Options", "DENY");
                // same-origin, not no-referrer: with no-referrer, Chromium sends "Origin: null" on the pages' own form POSTs.
                exchange.getResponseHeaders().set("Referrer-Policy", "same-origin");
                if (settings.token() == null && !loopbackHost(exchange)) {
                    // A page of another site that had its name resolve to 127.0.0.1 (DNS rebinding) is
                    // "same origin" to the browser: only the Host header tells it apart.
                    send(exchange, 421, "text/plain; charset=utf-8", "this dashboard answers only to 127.0.0.1, localhost and [::1];"
                            + " to reach it under another name, give it a token\n");
                    return;
                }
                if (exchange.getRequestMethod().equals("POST") && !sameOrigin(exchange)) {
                    send(exchange, 403, "text/plain; charset=utf-8", "a change must come from the dashboard's own pages\n");
                    return;
                }
                Access access = settings.token() == null ? Access.GRANTED : access(settings.token(), exchange);
                if (access == Access.REDIRECTED) {
                    return;
                }
                if (access == Access.DENIED) {
                    send(exchange, 401, "text/plain; charset=utf-8",
                            "this dashboard needs its token: send 'Authorization: Bearer <token>', or open it once with ?token=<token>\n");
                    return;
                }
                inner.handle(exchange);
            } catch (IllegalArgumentException e) {
                // Bad input (an unknown queue, a malformed id): the caller's to fix, not the server's log's.
                LOG.log(System.Logger.Level.DEBUG, "dashboard request {0} refused: {1}", exchange.getRequestURI().getPath(), e.getMessage());
                sendQuietly(exchange, 400, "bad request: " + e.getMessage() + "\n");
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "dashboard request " + exchange.getRequestURI().getPath() + " failed", e);
                sendQuietly(exchange, 500, "internal error: see the server log\n");
            } finally {
                exchange.close();
            }
        };
    }

    private static void sendQuietly(HttpExchange exchange, int status, String body) {
        try {
            send(exchange, status, "text/plain; charset=utf-8", body);
        } catch (IOException | RuntimeException ignored) {
            // the response had started: the client sees a cut response
        }
    }

    /** Whether the Host header names a loopback address: 127.0.0.1, localhost or [::1] (any port). */
    private static boolean loopbackHost(HttpExchange exchange) {
        List<String> hosts = exchange.getRequestHeaders().get("Host");
        return hosts != null && hosts.size() == 1 && LOOPBACK_HOST.matcher(hosts.getFirst().strip().toLowerCase(Locale.ROOT)).matches();
    }

    /**
     * Whether a POST came from a page of this server: its Origin (or, without one, its Referer)
     * is {@code http://} and the host it was sent to (the server speaks plain HTTP only). A request with neither (curl, scripts) still needs the CSRF
     * token, which only the dashboard's pages carry.
     */
    private static boolean sameOrigin(HttpExchange exchange) {
        String host = exchange.getRequestHeaders().getFirst("Host");
        String origin = exchange.getRequestHeaders().getFirst("Origin");
        String site = exchange.getRequestHeaders().getFirst("Sec-Fetch-Site");
        if (site != null && site.equals("cross-site")) {
            return false;
        }
        if (origin != null) {
            // "null" is an opaque origin (a sandboxed frame, a file): never one of the dashboard's pages.
            return host != null && origin.equals("http://" + host);
        }
        String referer = exchange.getRequestHeaders().getFirst("Referer");
        if (referer != null) {
            return host != null && referer.startsWith("http://" + host + "/");
        }
        return true;
    }

    private enum Access { GRANTED, DENIED, REDIRECTED }

    private static Access access(String token, HttpExchange exchange) throws IOException {
        String auth = exchange.getRequestHeaders().getFirst("Authorization");
        if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7) && same(token, auth.substring(7).strip())) {
            return Access.GRANTED;
        }
        String cookies = exchange.getRequestHeaders().getFirst("Cookie");
        if (cookies != null) {
            for (String c : cookies.split(";")) {
                String[] kv = c.strip().split("=", 2);
                if (kv.length == 2 && kv[0].equals(TOKEN_COOKIE) && same(token, kv[1])) {
                    return Access.GRANTED;
                }
            }
        }
        String query = exchange.getRequestURI().getRawQuery();
        if (query != null) {
            for (String part : query.split("&")) {
                // '+' stays '+': a base64 token needs no percent-encoding in the address bar.
                if (part.startsWith("token=") && same(token, URLDecoder.decode(part.substring(6).replace("+", "%2B"), StandardCharsets.UTF_8))) {
                    // Kept as an HttpOnly cookie, and the page reloaded without it: the token leaves the address bar and history.
                    exchange.getResponseHeaders().add("Set-Cookie", TOKEN_COOKIE + "=" + token + "; Path=/; HttpOnly; SameSite=Strict");
                    if (exchange.getRequestMethod().equals("GET") && !exchange.getRequestURI().getPath().equals("/metrics")) {
                        String rest = Arrays.stream(query.split("&")).filter(p -> !p.startsWith("token="))
                                .collect(Collectors.joining("&"));
                        exchange.getResponseHeaders().set("Location", exchange.getRequestURI().getRawPath() + (rest.isEmpty() ? "" : "?" + rest));
                        exchange.sendResponseHeaders(303, -1);
                        return Access.REDIRECTED;
                    }
                    return Access.GRANTED;
                }
            }
        }
        return Access.DENIED;
    }

    private static boolean same(String expected, String given) {
        return MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8), given.getBytes(StandardCharsets.UTF_8));
    }

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
    public InetSocketAddress address() { return server.getAddress(); }

    /**
     * The server's base address, such as {@code http://127.0.0.1:9470/}: the address it was bound
     * to as given ({@code 0.0.0.0} stays that, where the socket reports {@code ::} on a dual-stack
     * host), IPv6 in its short form, with the actual port.
     */
    public URI uri() {
        return URI.create("http://" + urlHost(settings.bind()) + ":" + address().getPort() + "/");
    }

    /**
     * What a start-up line says of a dashboard at {@code uri}: the address, with "all interfaces"
     * for a wildcard one (not an address to type, but what it listens on), and where /metrics is.
     */
    public static String announcement(URI uri, boolean readOnly) {
        boolean wildcard = uri.getHost().equals("0.0.0.0") || uri.getHost().equals("[::]");
        return uri + " (" + (wildcard ? "all interfaces; " : "") + "metrics at " + uri.resolve("metrics") + ")"
                + (readOnly ? ", read-only" : "");
    }

    /** {@code address} as a URL's host: IPv6 in brackets and compressed (RFC 5952), such as {@code [::1]}. */
    static String urlHost(InetAddress address) {
        String host = address.getHostAddress();
        if (!(address instanceof Inet6Address)) {
            return host;
        }
        int scope = host.indexOf('%');
        String[] groups = (scope < 0 ? host : host.substring(0, scope)).split(":");
        // The longest run of two or more zero groups (the first of equals) becomes "::".
        int bestStart = -1;
        int bestLength = 1;
        for (int i = 0; i < groups.length; ) {
            int j = i;
            while (j < groups.length && Integer.parseInt(groups[j], 16) == 0) {
                j++;
            }
            if (j - i > bestLength) {
                bestStart = i;
                bestLength = j - i;
            }
            i = Math.max(j, i + 1);
        }
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < groups.length; i++) {
            if (i == bestStart) {
                b.append("::");
                i += bestLength - 1;
                continue;
            }
            if (b.length() > 1 && b.charAt(b.length() - 1) != ':') {
                b.append(':');
            }
            b.append(Integer.toHexString(Integer.parseInt(groups[i], 16)));
        }
        // A zone in a URL is percent-encoded ("%25"), as RFC 6874 asks.
        return b.append(scope < 0 ? "" : "%25" + host.substring(scope + 1)).append(']').toString();
    }

    public Settings settings() { return settings; }

    /** Stops accepting, gives running exchanges a second, and stops. */
    @Override
    public void close() {
        server.stop(1);
        executor.close();
    }
}
