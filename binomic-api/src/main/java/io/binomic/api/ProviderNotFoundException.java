package io.binomic.api;

import java.io.Serial;
import java.util.List;

/**
 * No provider, or more than one, matched a request (a broker URL scheme, a codec id). The
 * message lists every provider found so the fix is obvious.
 */
public class ProviderNotFoundException extends BinomicException {
    @Serial private static final long serialVersionUID = 1L;
    private final transient List<String> found;

    public ProviderNotFoundException(String message, List<String> found) {
        super(message);
        this.found = List.copyOf(found);
    }

    /** One line per provider found: id, class and module. */
    public List<String> found() { return found; }
}
