package io.binomic.opentelemetry;

import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A span as one line of text, so that a worker JVM can hand its spans to the test through a file:
 * kind, name, trace id, span id, parent span id, the linked span ids and the attributes.
 */
record SpanLines(String kind, String name, String traceId, String spanId, String parentSpanId, List<String> links,
                 Map<String, String> attributes) {
    private static final String SEP = "\t";

    static String write(SpanData span) {
        String links = span.getLinks().stream().map(LinkData::getSpanContext).map(c -> c.getTraceId() + "/" + c.getSpanId())
                .collect(Collectors.joining(","));
        String attributes = span.getAttributes().asMap().entrySet().stream()
                .map(e -> e.getKey().getKey() + "=" + e.getValue()).collect(Collectors.joining("|"));
        return String.join(SEP, span.getKind().name(), span.getName(), span.getTraceId(), span.getSpanId(), span.getParentSpanId(),
                links, attributes);
    }

    static SpanLines read(String line) {
        String[] f = line.split(SEP, -1);
        Map<String, String> attributes = new LinkedHashMap<>();
        if (!f[6].isEmpty()) {
            for (String pair : f[6].split("\\|")) {
                int eq = pair.indexOf('=');
                attributes.put(pair.substring(0, eq), pair.substring(eq + 1));
            }
        }
        return new SpanLines(f[0], f[1], f[2], f[3], f[4], f[5].isEmpty() ? List.of() : Arrays.asList(f[5].split(",")), attributes);
    }

    String attribute(AttributeKey<?> key) {
        return attributes.get(key.getKey());
    }
}
