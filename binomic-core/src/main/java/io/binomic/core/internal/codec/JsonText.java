package io.binomic.core.internal.codec;

/** Checks JSON text given by people (the CLI, {@code submitJson}) before it goes on a queue. */
public final class JsonText {
    private JsonText() { }

    /**
     * @throws IllegalArgumentException naming where the text stops being JSON
     */
    public static void requireJson(String text) {
        try {
            JsonParser.parse(text);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("the argument is not JSON: " + e.getMessage()
                    + " (give JSON text such as {\"name\":\"Ada\"}; on a command line, quote it for the shell)", e);
        }
    }
}
