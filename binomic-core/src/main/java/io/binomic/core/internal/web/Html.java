package io.binomic.core.internal.web;

/**
 * Builds the dashboard's HTML. Every value that a user, a producer or a handler controls (queue
 * and task names, payloads, error messages, headers, ids typed in a search box) goes through
 * {@link #text}, so a payload holding {@code <script>} shows as text and never runs.
 */
final class Html {
    private final StringBuilder out = new StringBuilder(8192);

    /** Escapes {@code value} for element content and quoted attribute values. */
    static String escape(String value) {
        if (value == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(value.length() + 16);
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '&' -> b.append("&amp;");
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> b.append(c);
            }
        }
        return b.toString();
    }

    /** Appends markup written here, never user data. */
    Html raw(String markup) {
        out.append(markup);
        return this;
    }

    /** Appends user data, escaped. */
    Html text(Object value) {
        out.append(escape(value == null ? "" : String.valueOf(value)));
        return this;
    }

    /** A table row of escaped cells. */
    Html row(Object... cells) {
        out.append("<tr>");
        for (Object c : cells) {
            out.append("<td>").append(escape(c == null ? "" : String.valueOf(c))).append("</td>");
        }
        out.append("</tr>\n");
        return this;
    }

    Html head(String... cells) {
        out.append("<thead><tr>");
        for (String c : cells) {
            out.append("<th>").append(escape(c)).append("</th>");
        }
        out.append("</tr></thead>\n");
        return this;
    }

    @Override
    public String toString() { return out.toString(); }
}
