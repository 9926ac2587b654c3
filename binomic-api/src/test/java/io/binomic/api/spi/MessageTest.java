package io.binomic.api.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Priority;
import io.binomic.api.TraceContext;
import io.binomic.api.Uniqueness;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class MessageTest {
    private static final UUID ID = UUID.fromString("01a23388-0b74-71a7-8a20-5fd39b7716ab");
    private static final Instant AT = Instant.ofEpochMilli(1_796_160_883_611L);
    private static final TraceContext TRACE = TraceContext.of("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "vendor=a");

    private static Message.Builder plain() {
        return Message.builder().id(ID).task("t").queue("q").enqueuedAt(AT).payload("{}".getBytes(StandardCharsets.UTF_8));
    }

    private static Message full() {
        return plain().attempt(3).codec("json-jdk").priority(8).trackFor(Duration.ofHours(1))
                .unique(new UniqueClaim(Uniqueness.Scope.WHILE_QUEUED, Duration.ofMinutes(5), "order-5"))
                .limitKey("acme").rateAdmittedAttempt(3).turnAttempt(2).traceContext(TRACE).replayedFrom("1796160883654-0")
                .header("tenant", "acme").header("b", "2").build();
    }

    @Test
    void theEnvelopeIsTypedAndTheUserHeadersHoldOnlyTheUsers() {
        Message m = full();
        assertEquals(8, m.priority());
        assertTrue(m.isTracked());
        assertEquals(Optional.of(Duration.ofHours(1)), m.trackFor());
        assertEquals(Optional.of("json-jdk"), m.codec());
        assertEquals("order-5", m.unique().orElseThrow().key());
        assertEquals(Optional.of("acme"), m.limitKey());
        assertTrue(m.isRateAdmitted(), "admitted for its own attempt");
        assertEquals(OptionalInt.of(2), m.turnAttempt());
        assertFalse(m.isTurn(), "the turn of an earlier attempt");
        assertEquals(Optional.of(TRACE), m.traceContext());
        assertEquals(Optional.of("1796160883654-0"), m.replayedFrom());
        assertEquals(Map.of("tenant", "acme", "b", "2"), m.userHeaders());

        Message bare = plain().build();
        assertEquals(Priority.DEFAULT, bare.priority());
        assertFalse(bare.isTracked());
        assertEquals(Map.of(), bare.wireHeaders());
    }

    @Test
    void theWireHeadersComeInAFixedOrderAndReadBackToTheSameMessage() {
        Message m = full();
        assertEquals(List.of("codec", "track", "priority", "unique", "limitKey", "limit.rate", "limit.turn", "traceparent", "tracestate",
                "replayedFrom", "b", "tenant"), List.copyOf(m.wireHeaders().keySet()));
        assertEquals("3600000", m.wireHeaders().get(Message.TRACK));
        assertEquals("W 300000 order-5", m.wireHeaders().get(UniqueClaim.HEADER));
        Message back = Message.fromWire(ID, "t", "q", 3, AT, m.payload(), m.wireHeaders());
        assertEquals(m, back);
        assertEquals(m.wireHeaders(), back.wireHeaders());
        assertEquals(Map.of(Message.CODEC, "json-jdk"), plain().codec("json-jdk").build().wireHeaders());
        assertEquals(Map.of(Message.CODEC, "json-jdk", Message.TRACK, "60000"),
                Message.fromWire(ID, "t", "q", 1, AT, m.payload(), Map.of("track", "60000", "codec", "json-jdk")).wireHeaders());
    }

    @Test
    void aWorkflowsIdTravelsAsItsHeaderAndAnUnreadableOneIsKeptAsItWas() {
        UUID workflow = UUID.randomUUID();
        Message m = plain().workflow(workflow).build();
        assertEquals(Map.of(Message.WORKFLOW, workflow.toString()), m.wireHeaders());
        assertEquals(workflow, Message.fromWire(ID, "t", "q", 1, AT, m.payload(), m.wireHeaders()).workflow());
        Message foreign = Message.fromWire(ID, "t", "q", 1, AT, m.payload(), Map.of(Message.WORKFLOW, "not-an-id"));
        assertEquals(null, foreign.workflow());
        assertEquals(Map.of(Message.WORKFLOW, "not-an-id"), foreign.wireHeaders());
        assertThrows(IllegalArgumentException.class, () -> plain().header(Message.WORKFLOW, workflow.toString()).build());
    }

    @Test
    void aReservedHeaderThatDoesNotParseIsKeptAsItWasAndReadAsNoSetting() {
        Map<String, String> wire = Map.of("priority", "high", "traceparent", "not-a-traceparent", "tracestate", "x=1",
                "limit.turn", "soon", "unique", "?", "codec", "jackson");
        Message m = Message.fromWire(ID, "t", "q", 1, AT, new byte[0], wire);
        assertEquals(Priority.DEFAULT, m.priority());
        assertEquals(Optional.empty(), m.traceContext());
        assertEquals(OptionalInt.empty(), m.turnAttempt());
        assertEquals(Optional.empty(), m.unique());
        assertEquals(Optional.of("jackson"), m.codec());
        assertEquals(wire, m.wireHeaders(), "written back unchanged");
    }

    @Test
    void anInvalidFieldIsRefusedWhereTheMessageIsBuiltNamingIt() {
        assertMessage("priority must be from 0 (lowest) to 9 (highest), was 10; leave it out for the default 5", plain().priority(10));
        assertMessage("trackFor must be positive, was PT0S; leave it out for a job whose status is not kept", plain().trackFor(Duration.ZERO));
        assertMessage("codec must not be blank; leave it out for none", plain().codec(" "));
        assertMessage("limitKey must not be empty; leave it out for a job without one", plain().limitKey(""));
        assertMessage("turnAttempt must be an attempt (>= 1), or 0 for none, was -1", plain().turnAttempt(-1));
        assertMessage("attempt must be >= 1, was 0", plain().attempt(0));
        assertMessage("header 'replayedFrom' is reserved for the message's envelope; set it with its Message.Builder field,"
                + " or give the header another name", plain().header("replayedFrom", "x"));
        NullPointerException noId = assertThrows(NullPointerException.class, () -> plain().id(null).build());
        assertEquals("id must not be null", noId.getMessage());
    }

    @Test
    void theWithersChangeOneFieldAndKeepTheRest() {
        Message m = full();
        assertTrue(m.withTurn(true).isTurn());
        assertEquals(OptionalInt.empty(), m.withTurn(false).turnAttempt());
        assertEquals(Optional.of("dl-2"), m.withReplayedFrom("dl-2").replayedFrom());
        Message moved = m.withAttempt(1, AT.plusSeconds(1)).withQueue("q#1");
        assertEquals(1, moved.attempt());
        assertEquals("q#1", moved.queue());
        assertFalse(moved.isRateAdmitted(), "admitted for attempt 3, not for 1");
        assertEquals(m.userHeaders(), moved.userHeaders());
        assertEquals(m.priority(), moved.priority());
    }

    private static void assertMessage(String expected, Message.Builder builder) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, builder::build);
        assertEquals(expected, e.getMessage());
    }
}
