package io.binomic.core.internal;

import java.util.Optional;
import java.util.UUID;

/**
 * Job, batch and workflow ids typed or pasted by a person (the CLI's {@code --id}, the dashboard's
 * {@code ?id=} and paths), read in the canonical form only. {@link UUID#fromString} pads short
 * groups with zeros, so a mistyped or truncated id would name another id, and a cancel would act on
 * an id nobody typed.
 */
public final class CanonicalIds {
    /** What an id looks like, for the message that refuses one. */
    public static final String FORM = "36 characters, 8-4-4-4-12 hex digits, such as 0193a3c4-5e6f-7a8b-9c0d-1e2f3a4b5c6d";

    private static final int LENGTH = 36;

    private CanonicalIds() { }

    /**
     * {@code text} as an id, ignoring spaces around it (an id pasted with them); empty when it is
     * null or not in the canonical form.
     */
    public static Optional<UUID> parse(String text) {
        if (text == null) {
            return Optional.empty();
        }
        String id = text.strip();
        if (id.length() != LENGTH) {
            return Optional.empty();
        }
        for (int i = 0; i < LENGTH; i++) {
            char c = id.charAt(i);
            boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
            if (dash ? c != '-' : !hex(c)) {
                return Optional.empty();
            }
        }
        return Optional.of(UUID.fromString(id));
    }

    /** ASCII hex only: {@link Character#digit} also takes other scripts' digits. */
    private static boolean hex(char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }

    /** Why {@code text} is refused as the id of a {@code noun} ("job", "batch", "workflow"). */
    public static String refusal(String text, String noun) {
        return "'" + text + "' is not a " + noun + " id (" + FORM + ")";
    }
}
