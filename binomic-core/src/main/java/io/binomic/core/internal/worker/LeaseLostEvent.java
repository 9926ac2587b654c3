package io.binomic.core.internal.worker;

import jdk.jfr.Category;
import jdk.jfr.Description;
import jdk.jfr.Event;
import jdk.jfr.Label;
import jdk.jfr.Name;
import jdk.jfr.StackTrace;

/**
 * JFR event per delivery a worker found it no longer owns while it still held it: its lease lapsed
 * (a stalled round, a pause of the JVM, renewals that could not reach the broker) and another worker
 * may run it. A duplicate run in a recording lines up with one of these.
 */
@Name("io.binomic.LeaseLost")
@Label("Binomic Lease Lost")
@Category({"Binomic"})
@Description("A worker found that a delivery it held was taken over by another worker")
@StackTrace(false)
final class LeaseLostEvent extends Event {
    @Label("Worker") String worker;
    @Label("Queue") String queue;
    @Label("Receipt") String receipt;
    @Label("Attempt") int attempt;
    /** "dropped before running" (a stalled read or reclaim), "handler interrupted", or "not started" (held for a slot). */
    @Label("Action") String action;
}
