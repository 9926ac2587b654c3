package io.binomic.core.internal.cli;

import io.binomic.api.JobHandle;
import io.binomic.core.Binomic;
import io.binomic.core.internal.MistakenIds;
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
    static int print(PrintStream out, PrintStream err, Binomic binomic, String noun, UUID id, String brokerRead,
                     JobHandle.CancelOutcome outcome) {
        out.println(outcome + " " + id);
        if (outcome == JobHandle.CancelOutcome.NOT_FOUND) {
            err.println(notFound(binomic, noun, "cancel", id, brokerRead));
        }
        return outcome == JobHandle.CancelOutcome.CANCELLED || outcome == JobHandle.CancelOutcome.CANCEL_REQUESTED
                ? BinomicCli.EXIT_OK : BinomicCli.EXIT_FAILED;
    }

    /**
     * What {@code show} and {@code cancel} ({@code verb}) say of an id the broker does not know, with the broker read: a
     * wrong {@code --broker} or database otherwise reads as a wrong id. An id of another kind (a workflow's given to
     * {@code batch show}) is named as such, with the command that reads it.
     */
    static String notFound(Binomic binomic, String noun, String verb, UUID id, String brokerRead) {
        String why = MistakenIds.kindOf(binomic, id, noun).map(kind -> MistakenIds.sentence(kind, id, verb))
                .orElse("a wrong id or broker, or a " + noun + " past its retention");
        return "no " + noun + " " + id + " on " + brokerRead + ": " + why;
    }
}
