package io.binomic.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The W3C traceparent format is checked where the value enters, with messages that name the fix. */
class TraceContextTest {

    static final String VALID = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    @Test
    void aValidTraceparentIsReadIntoItsFields() {
        TraceContext ctx = TraceContext.of(VALID, "congo=t61rcWkgMzE");
        assertEquals("4bf92f3577b34da6a3ce929d0e0e4736", ctx.traceId());
        assertEquals("00f067aa0ba902b7", ctx.parentId());
        assertTrue(ctx.sampled());
        assertFalse(TraceContext.of(VALID.replace("-01", "-00")).sampled());
        assertEquals(Map.of("traceparent", VALID, "tracestate", "congo=t61rcWkgMzE"), ctx.headers());
        assertEquals(Map.of("traceparent", VALID), TraceContext.of(VALID).headers(), "an empty tracestate is no header");
    }

    @Test
    void aLaterVersionMayAppendFields() {
        assertEquals("01", TraceContext.of("01" + VALID.substring(2) + "-what-comes-next").traceparent().substring(0, 2));
    }

    @Test
    void malformedTraceparentsAreRefusedWithTheReasonAndTheFix() {
        assertEquals("traceparent 'abc' is not a W3C traceparent: it has 3 characters, at least 55 are needed;"
                + " pass the value your tracer's propagator writes (version-traceid-parentid-flags in lowercase hex, such as "
                + VALID + "), or leave it out", assertThrows(IllegalArgumentException.class, () -> TraceContext.of("abc")).getMessage());
        assertReason(VALID.toUpperCase(), "character 'B' at position 5 is not a lowercase hex digit");
        assertReason(VALID.replace('-', '_'), "the four fields must be separated by '-' at positions 3, 36 and 53");
        assertReason("ff" + VALID.substring(2), "version ff is forbidden");
        assertReason(VALID + "-x", "version 00 has exactly 55 characters, this has 57");
        assertReason("00-" + "0".repeat(32) + VALID.substring(35), "the trace id is all zeros");
        assertReason(VALID.substring(0, 36) + "0".repeat(16) + "-01", "the parent id is all zeros");
        assertReason(null, "it is missing");
    }

    /** HTTP frameworks hand over 'Traceparent': kept as an ordinary header, the trace was lost without a word. */
    @Test
    void aTraceHeaderInOtherLetterCaseIsRefusedNamingTheW3CName() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SubmitOptions.builder().headers(java.util.Map.of("Traceparent", VALID)));
        assertEquals("header 'Traceparent' is the W3C 'traceparent' header with other letter case: message headers are"
                + " case-sensitive and the trace context is read only as 'traceparent'; pass it under that name (or with"
                + " SubmitOptions.traceContext)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SubmitOptions.builder().headers(java.util.Map.of("traceparent", VALID, "TRACESTATE", "a=b")));
    }

    @Test
    void aBadTracestateIsRefused() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TraceContext.of(VALID, "a=" + "b".repeat(600)))
                .getMessage().startsWith("tracestate has 602 characters, at most 512 are allowed (W3C)"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> TraceContext.of(VALID, "a=b\nc=d"))
                .getMessage().startsWith("tracestate holds character 10 at position 4"));
    }

    @Test
    void submitOptionsCheckTraceHeadersAndRefuseTwoContexts() {
        IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> SubmitOptions.builder().headers(Map.of("traceparent", "not-a-trace")));
        assertTrue(bad.getMessage().startsWith("traceparent 'not-a-trace' is not a W3C traceparent"), bad.getMessage());
        assertEquals("header 'tracestate' was given without 'traceparent': a tracestate only means something beside its"
                + " traceparent; add the traceparent or leave both out", assertThrows(IllegalArgumentException.class,
                () -> SubmitOptions.builder().headers(Map.of("tracestate", "a=b"))).getMessage());
        assertEquals("the trace context was given twice, as traceContext(...) and as header 'traceparent'; give one",
                assertThrows(IllegalArgumentException.class, () -> SubmitOptions.builder().headers(Map.of("traceparent", VALID))
                        .traceContext(TraceContext.of(VALID)).build()).getMessage());
        assertEquals(Optional.of(TraceContext.of(VALID)), SubmitOptions.builder().traceContext(TraceContext.of(VALID)).build().traceContext());
    }

    @Test
    void readingHeadersIgnoresAMalformedTraceparentAsTheW3cAsksOfAReceiver() {
        assertEquals(Optional.empty(), TraceContext.fromHeaders(Map.of("traceparent", "garbage")));
        assertEquals(Optional.empty(), TraceContext.fromHeaders(Map.of()));
        assertEquals(Optional.of(TraceContext.of(VALID, "k=v")), TraceContext.fromHeaders(Map.of("traceparent", VALID, "tracestate", "k=v")));
    }

    private static void assertReason(String value, String reason) {
        String message = assertThrows(IllegalArgumentException.class, () -> TraceContext.of(value)).getMessage();
        assertTrue(message.contains(": " + reason + "; "), message);
    }
}
