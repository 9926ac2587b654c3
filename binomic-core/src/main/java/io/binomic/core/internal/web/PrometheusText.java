package io.binomic.core.internal.web;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Writes the Prometheus text exposition format (version 0.0.4): one {@code # HELP} and
 * {@code # TYPE} per family, then its samples. Label values are escaped as the format requires
 * (backslash, double quote, newline), since queue and task names are the users'.
 */
public final class PrometheusText {
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /** Each family's lines, in the order declared: the format wants a family's lines together, whatever order samples come in. */
    private final Map<String, StringBuilder> families = new LinkedHashMap<>();

    /** Declares a family once; later calls for the same name do nothing. */
    public PrometheusText family(String name, String type, String help) {
        families.computeIfAbsent(name, n -> new StringBuilder(256)
                .append("# HELP ").append(name).append(' ').append(help.replace("\\", "\\\\").replace("\n", "\\n")).append('\n')
                .append("# TYPE ").append(name).append(' ').append(type).append('\n'));
        return this;
    }

    /** The lines of the family {@code sample} belongs to: its own, or its histogram's for {@code _bucket}, {@code _sum}, {@code _count}. */
    private StringBuilder familyOf(String sample) {
        StringBuilder own = families.get(sample);
        if (own != null) {
            return own;
        }
        for (String suffix : new String[] {"_bucket", "_sum", "_count"}) {
            if (sample.endsWith(suffix)) {
                StringBuilder histogram = families.get(sample.substring(0, sample.length() - suffix.length()));
                if (histogram != null) {
                    return histogram;
                }
            }
        }
        throw new IllegalStateException("sample " + sample + " of an undeclared family: call family() first");
    }

    /** One sample; {@code labels} alternate names and values. */
    public PrometheusText sample(String name, double value, String... labels) {
        StringBuilder out = familyOf(name);
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

    static String escape(String value) { return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n"); }

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
        StringBuilder all = new StringBuilder(4096);
        families.values().forEach(all::append);
        return all.toString();
    }
}
