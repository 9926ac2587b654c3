package io.binomic.core.internal.cli;

import io.binomic.api.JobHandle;
import java.io.PrintStream;
import java.util.UUID;

/**
 * How {@code binomic batch cancel} and {@code binomic workflow cancel} report what they did: in
 * the same words and exit codes as {@code binomic job cancel}, so that a script reads all three the
 * same way.
 */
final class FlowCancelReport {
    private FlowCancelReport() { }

    /**
     * Prints {@code OUTCOME id} on {@code out} and, for an unknown id, why on {@code err}, naming the broker read
     * ({@link Command#brokerRead}); returns the exit code: 0 when the cancel stopped something, 1 when it changed nothing.
     */
    static int print(PrintStream out, PrintStream err, String noun, UUID id, String brokerRead, JobHandle.CancelOutcome outcome) {
        out.println(outcome + " " + id);
        if (outcome == JobHandle.CancelOutcome.NOT_FOUND) {
            err.println(notFound(noun, id, brokerRead));
        }
        return outcome == JobHandle.CancelOutcome.CANCELLED || outcome == JobHandle.CancelOutcome.CANCEL_REQUESTED
                ? BinomicCli.EXIT_OK : BinomicCli.EXIT_FAILED;
    }

    /**
     * What {@code show} and {@code cancel} say of an id the broker does not know, with the broker read: a wrong
     * {@code --broker} or database otherwise reads as a wrong id.
     */
    static String notFound(String noun, UUID id, String brokerRead) {
        return "no " + noun + " " + id + " on " + brokerRead + ": a wrong id or broker, or a " + noun + " past its retention";
    }
}
