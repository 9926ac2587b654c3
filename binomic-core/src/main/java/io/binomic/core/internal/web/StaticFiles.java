package io.binomic.core.internal.web;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * The files the dashboard's pages load: its style sheet, its script and its icon, shipped in the
 * core's jar. Only these names are served: a path never reaches the class path as given.
 */
final class StaticFiles {
    static final String PREFIX = "/static/";
    /** Where a browser asks for an icon on its own, for a page that names none (such as {@code /metrics}). */
    static final String FAVICON = "/favicon.ico";
    private static final Map<String, String> TYPES = Map.of(
            "dashboard.css", "text/css; charset=utf-8",
            "dashboard.js", "text/javascript; charset=utf-8",
            "favicon.svg", "image/svg+xml");

    private StaticFiles() { }

    /** The file a GET of {@code path} asks for, or null when {@code path} is no static file's. */
    static String name(String path) {
        String name = path.equals(FAVICON) ? "favicon.svg" : path.startsWith(PREFIX) ? path.substring(PREFIX.length()) : null;
        return name != null && TYPES.containsKey(name) ? name : null;
    }

    /** Whether {@code path} is under {@link #PREFIX} or the icon's: a name there that is unknown is a 404. */
    static boolean claims(String path) {
        return path.equals(FAVICON) || path.startsWith(PREFIX);
    }

    /** Sends file {@code name} (one {@link #name} gave). */
    static void send(HttpExchange exchange, String name) throws IOException {
        try (InputStream in = StaticFiles.class.getResourceAsStream("static/" + name)) {
            if (in == null) {
                throw new IllegalStateException("dashboard file " + name + " is missing from the jar");
            }
            DashboardServer.send(exchange, 200, TYPES.get(name), new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }
}
