package io.binomic.api;

import io.binomic.api.spi.TraceContextProvider;
import java.util.Map;
import java.util.Optional;

/**
 * A W3C trace context (<a href="https://www.w3.org/TR/trace-context/">Trace Context</a>): the
 * {@code traceparent} that names a trace and the span that submitted a job, and the vendor
 * {@code tracestate} that travels with it. A job carries it in its message headers
 * {@value #TRACEPARENT} and {@value #TRACESTATE}, unchanged across retries, reclaims and replays,
 * so the handler ({@link TaskContext#traceContext()}) can start a span whose parent is the
 * submitter's. Binomic records and forwards the context; it starts no spans itself.
 *
 * <p>A submit takes it from {@link SubmitOptions.Builder#traceContext(TraceContext)}, from the
 * headers given at submit, or else from the application's
 * {@link TraceContextProvider}.
 *
 * @param traceparent {@code version-traceid-parentid-flags}, such as
 *     {@code 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01}
 * @param tracestate the vendor list, such as {@code congo=t61rcWkgMzE}; empty for none
 */
public record TraceContext(String traceparent, String tracestate) {

    /** The message header holding the {@code traceparent}. */
    public static final String TRACEPARENT = "traceparent";

    /** The message header holding the {@code tracestate}; absent when it is empty. */
    public static final String TRACESTATE = "tracestate";

    /** W3C: a {@code tracestate} longer than this may be dropped by any hop, so refuse it at the source. */
    static final int MAX_TRACESTATE = 512;

    private static final String EXAMPLE = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    /**
     * @throws IllegalArgumentException when {@code traceparent} is not a W3C traceparent, or
     *     {@code tracestate} is longer than 512 characters or holds a character outside printable ASCII
     */
    public TraceContext {
        requireTraceparent(traceparent);
        tracestate = tracestate == null ? "" : tracestate;
        requireTracestate(tracestate);
    }

    /** A context without {@code tracestate}. */
    public static TraceContext of(String traceparent) { return new TraceContext(traceparent, ""); }

    /** A context with both parts; {@code tracestate} may be empty. */
    public static TraceContext of(String traceparent, String tracestate) {
        return new TraceContext(traceparent, tracestate);
    }

    /**
     * The context in {@code headers}, if they hold a well-formed one. A malformed
     * {@code traceparent} (written by another producer) reads as none, as the W3C asks of a
     * receiver: the handler then starts a new trace rather than failing the job.
     */
    public static Optional<TraceContext> fromHeaders(Map<String, String> headers) {
        String parent = headers.get(TRACEPARENT);
        if (parent == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(new TraceContext(parent, headers.getOrDefault(TRACESTATE, "")));
        } catch (IllegalArgumentException malformed) {
            return Optional.empty();
        }
    }

    /**
     * Checks the trace headers among a submit's {@code headers}: a {@code traceparent} must be
     * well formed, and a {@code tracestate} needs one.
     *
     * @throws IllegalArgumentException naming the bad header and the fix
     */
    static void requireValidHeaders(Map<String, String> headers) {
        for (String name : headers.keySet()) {
            for (String trace : new String[] {TRACEPARENT, TRACESTATE}) {
                if (name.equalsIgnoreCase(trace) && !name.equals(trace)) {
                    // HTTP header names ignore case and frameworks hand over 'Traceparent': silently
                    // keeping it as an ordinary header would lose the trace.
                    throw new IllegalArgumentException("header '" + name + "' is the W3C '" + trace + "' header with other"
                            + " letter case: message headers are case-sensitive and the trace context is read only as '" + trace
                            + "'; pass it under that name (or with SubmitOptions.traceContext)");
                }
            }
        }
        String parent = headers.get(TRACEPARENT);
        String state = headers.get(TRACESTATE);
        if (parent == null) {
            if (state != null) {
                throw new IllegalArgumentException("header '" + TRACESTATE + "' was given without '" + TRACEPARENT
                        + "': a tracestate only means something beside its traceparent; add the traceparent or leave both out");
            }
            return;
        }
        new TraceContext(parent, state);
    }

    /** The 32 hex digits naming the trace. */
    public String traceId() { return traceparent.substring(3, 35); }

    /** The 16 hex digits naming the submitter's span: the parent of the handler's span. */
    public String parentId() { return traceparent.substring(36, 52); }

    /** Whether the submitter's trace is sampled (flag bit 0). */
    public boolean sampled() { return (Integer.parseInt(traceparent.substring(53, 55), 16) & 1) == 1; }

    /** The message headers that carry this context: {@value #TRACEPARENT}, and {@value #TRACESTATE} unless empty. */
    public Map<String, String> headers() {
        return tracestate.isEmpty() ? Map.of(TRACEPARENT, traceparent) : Map.of(TRACEPARENT, traceparent, TRACESTATE, tracestate);
    }

    private static void requireTraceparent(String value) {
        String problem = traceparentProblem(value);
        if (problem != null) {
            throw new IllegalArgumentException("traceparent " + (value == null ? "null" : "'" + value + "'")
                    + " is not a W3C traceparent: " + problem + "; pass the value your tracer's propagator writes"
                    + " (version-traceid-parentid-flags in lowercase hex, such as " + EXAMPLE + "), or leave it out");
        }
    }

    private static String traceparentProblem(String v) {
        if (v == null) {
            return "it is missing";
        }
        if (v.length() < 55) {
            return "it has " + v.length() + " characters, at least 55 are needed";
        }
        if (v.charAt(2) != '-' || v.charAt(35) != '-' || v.charAt(52) != '-') {
            return "the four fields must be separated by '-' at positions 3, 36 and 53";
        }
        for (int i = 0; i < 55; i++) {
            char c = v.charAt(i);
            if (c != '-' && !(c >= '0' && c <= '9') && !(c >= 'a' && c <= 'f')) {
                return "character '" + c + "' at position " + (i + 1) + " is not a lowercase hex digit";
            }
        }
        String version = v.substring(0, 2);
        if (version.equals("ff")) {
            return "version ff is forbidden";
        }
        if (version.equals("00") ? v.length() != 55 : v.length() > 55 && v.charAt(55) != '-') {
            return version.equals("00") ? "version 00 has exactly 55 characters, this has " + v.length()
                    : "fields a later version adds must follow a '-'";
        }
        if (v.substring(3, 35).chars().allMatch(c -> c == '0')) {
            return "the trace id is all zeros";
        }
        if (v.substring(36, 52).chars().allMatch(c -> c == '0')) {
            return "the parent id is all zeros";
        }
        return null;
    }

    private static void requireTracestate(String value) {
        if (value.length() > MAX_TRACESTATE) {
            throw new IllegalArgumentException("tracestate has " + value.length() + " characters, at most " + MAX_TRACESTATE
                    + " are allowed (W3C); drop list members your tracer does not need");
        }
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7e) {
                throw new IllegalArgumentException("tracestate holds character " + (int) c + " at position " + (i + 1)
                        + ", outside printable ASCII (W3C); pass the value your tracer's propagator writes");
            }
        }
    }
}
