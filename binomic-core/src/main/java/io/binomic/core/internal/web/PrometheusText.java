package io.binomic.core.internal.web;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Writes the Prometheus text exposition format (version 0.0.4): one {@code # HELP} and
 * {@code # TYPE} per family, then its samples. Label values are escaped as the format requires
 * (backslash, double quote, newline), since queue and task names are the users'.
 */
public final class PrometheusText {
    /** The Content-Type of this format. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    private final StringBuilder out = new StringBuilder(4096);
    private final java.util.Set<String> declared = new java.util.HashSet<>();

    /** Declares a family once; later calls for the same name do nothing. */
    public PrometheusText family(String name, String type, String help) {
        if (declared.add(name)) {
            out.append("# HELP ").append(name).append(' ').append(help.replace("\\", "\\\\").replace("\n", "\\n")).append('\n');
            out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
        }
        return this;
    }

    /** One sample; {@code labels} alternate names and values. */
    public PrometheusText sample(String name, double value, String... labels) {
        out.append(name);
        if (labels.length > 0) {
            out.append('{');
            for (int i = 0; i < labels.length; i += 2) {
                if (i > 0) {
                    out.append(',');
                }
                out.append(labels[i]).append("=\"").append(escape(labels[i + 1])).append('"');
            }
            out.append('}');
        }
        out.append(' ').append(format(value)).append('\n');
        return this;
    }

    /** Labels as a map, for callers that build them up. */
    public static String[] labels(Map<String, String> labels) {
        String[] flat = new String[labels.size() * 2];
        int i = 0;
        for (Map.Entry<String, String> e : new LinkedHashMap<>(labels).entrySet()) {
            flat[i++] = e.getKey();
            flat[i++] = e.getValue();
        }
        return flat;
    }

    static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }

    static String format(double value) {
        if (Double.isInfinite(value)) {
            return value > 0 ? "+Inf" : "-Inf";
        }
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            return Long.toString((long) value);
        }
        return Double.toString(value);
    }

    @Override
    public String toString() {
        return out.toString();
    }
}
