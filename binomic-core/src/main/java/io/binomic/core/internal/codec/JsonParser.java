package io.binomic.core.internal.codec;

import io.binomic.api.PayloadDecodeException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict RFC 8259 parser producing a plain tree: {@link Map} (objects, insertion-ordered),
 * {@link List} (arrays), {@link String}, {@link JsonNumber}, {@link Boolean} and {@code null}.
 * It never instantiates anything but these, whatever the payload says.
 */
final class JsonParser {
    /** Deeper documents are rejected, so a hostile payload cannot overflow the stack. */
    static final int MAX_DEPTH = 256;

    /** A JSON number kept as its text, so that the target type decides how to read it. */
    record JsonNumber(String text) {
        @Override
        public String toString() { return text; }
    }

    private final String text;
    private int position;

    private JsonParser(String text) {
        this.text = text;
    }

    /** Parses one JSON value that must fill {@code text} (surrounding whitespace aside). */
    static Object parse(String text) {
        JsonParser parser = new JsonParser(text);
        parser.skipWhitespace();
        Object value = parser.readValue(JsonPath.ROOT, 0);
        parser.skipWhitespace();
        if (parser.position < text.length()) {
            throw parser.error(JsonPath.ROOT, "unexpected " + parser.describeNext() + " after the JSON value");
        }
        return value;
    }

    private Object readValue(JsonPath path, int depth) {
        if (position >= text.length()) {
            throw error(path, "expected a value, got the end of the payload");
        }
        char c = text.charAt(position);
        return switch (c) {
            case '{' -> readObject(path, depth + 1);
            case '[' -> readArray(path, depth + 1);
            case '"' -> readString(path);
            case 't' -> readLiteral(path, "true", Boolean.TRUE);
            case 'f' -> readLiteral(path, "false", Boolean.FALSE);
            case 'n' -> readLiteral(path, "null", null);
            default -> {
                if (c == '-' || (c >= '0' && c <= '9')) {
                    yield readNumber(path);
                }
                throw error(path, "expected a value, got " + describeNext());
            }
        };
    }

    private Map<String, Object> readObject(JsonPath path, int depth) {
        checkDepth(path, depth);
        position++; // '{'
        Map<String, Object> object = new LinkedHashMap<>();
        skipWhitespace();
        if (tryConsume('}')) {
            return object;
        }
        while (true) {
            skipWhitespace();
            if (position >= text.length() || text.charAt(position) != '"') {
                throw error(path, "expected a property name in double quotes, got " + describeNext());
            }
            String name = readString(path);
            JsonPath child = path.property(name);
            if (object.containsKey(name)) {
                // Rejected rather than "last wins": parsers disagreeing on duplicates is an attack vector.
                throw error(child, "duplicate property " + JsonWriter.quote(name));
            }
            skipWhitespace();
            expect(path, ':', "':'");
            skipWhitespace();
            object.put(name, readValue(child, depth));
            skipWhitespace();
            if (tryConsume('}')) {
                return object;
            }
            expect(path, ',', "',' or '}'");
        }
    }

    private List<Object> readArray(JsonPath path, int depth) {
        checkDepth(path, depth);
        position++; // '['
        List<Object> array = new ArrayList<>();
        skipWhitespace();
        if (tryConsume(']')) {
            return array;
        }
        while (true) {
            skipWhitespace();
            array.add(readValue(path.index(array.size()), depth));
            skipWhitespace();
            if (tryConsume(']')) {
                return array;
            }
            expect(path, ',', "',' or ']'");
        }
    }

    private void checkDepth(JsonPath path, int depth) {
        if (depth > MAX_DEPTH) {
            throw error(path, "nesting is deeper than " + MAX_DEPTH + " levels; flatten the payload");
        }
    }

    private String readString(JsonPath path) {
        position++; // opening quote
        StringBuilder value = new StringBuilder();
        while (true) {
            if (position >= text.length()) {
                throw error(path, "unterminated string");
            }
            char c = text.charAt(position++);
            if (c == '"') {
                return value.toString();
            }
            if (c < 0x20) {
                throw error(path, String.format("control character U+%04X must be escaped in a string", (int) c));
            }
            if (c != '\\') {
                value.append(c);
                continue;
            }
            if (position >= text.length()) {
                throw error(path, "unterminated string");
            }
            char escape = text.charAt(position++);
            switch (escape) {
                case '"', '\\', '/' -> value.append(escape);
                case 'b' -> value.append('\b');
                case 'f' -> value.append('\f');
                case 'n' -> value.append('\n');
                case 'r' -> value.append('\r');
                case 't' -> value.append('\t');
                case 'u' -> value.append(readUnicodeEscape(path));
                default -> throw error(path, "invalid escape \\" + escape + " in a string");
            }
        }
    }

    private char readUnicodeEscape(JsonPath path) {
        if (position + 4 > text.length()) {
            throw error(path, "incomplete \\u escape in a string");
        }
        int code = 0;
        for (int i = 0; i < 4; i++) {
            char c = text.charAt(position + i);
            // Character.digit also accepts full-width and other non-ASCII digits; JSON allows only [0-9a-fA-F].
            int digit = c < 128 ? Character.digit(c, 16) : -1;
            if (digit < 0) {
                throw error(path, "invalid \\u escape \\u" + text.substring(position, position + 4));
            }
            code = code * 16 + digit;
        }
        position += 4;
        return (char) code;
    }

    private JsonNumber readNumber(JsonPath path) {
        int start = position;
        tryConsume('-');
        // A lone 0 or a digit run: JSON forbids leading zeros such as 012 (the 1 is then rejected after it).
        if (!tryConsume('0') && !skipDigits()) {
            throw error(path, "invalid number " + describeFrom(start));
        }
        if (tryConsume('.') && !skipDigits()) {
            throw error(path, "invalid number " + describeFrom(start) + ": digits must follow the decimal point");
        }
        if (tryConsume('e') || tryConsume('E')) {
            if (!tryConsume('+')) {
                tryConsume('-');
            }
            if (!skipDigits()) {
                throw error(path, "invalid number " + describeFrom(start) + ": digits must follow the exponent");
            }
        }
        return new JsonNumber(text.substring(start, position));
    }

    private boolean skipDigits() {
        int start = position;
        while (position < text.length() && text.charAt(position) >= '0' && text.charAt(position) <= '9') {
            position++;
        }
        return position > start;
    }

    private Object readLiteral(JsonPath path, String literal, Object value) {
        if (!text.startsWith(literal, position)) {
            throw error(path, "expected a value, got " + describeNext());
        }
        position += literal.length();
        return value;
    }

    private void skipWhitespace() {
        while (position < text.length()) {
            char c = text.charAt(position);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            position++;
        }
    }

    private boolean tryConsume(char expected) {
        if (position < text.length() && text.charAt(position) == expected) {
            position++;
            return true;
        }
        return false;
    }

    private void expect(JsonPath path, char expected, String whatWasExpected) {
        if (!tryConsume(expected)) {
            throw error(path, "expected " + whatWasExpected + ", got " + describeNext());
        }
    }

    private String describeNext() {
        if (position >= text.length()) {
            return "the end of the payload";
        }
        return describeFrom(position);
    }

    private String describeFrom(int start) {
        int end = Math.min(text.length(), Math.max(position, start + 1));
        String excerpt = text.substring(start, Math.min(end, start + 20));
        return JsonWriter.quote(excerpt);
    }

    private PayloadDecodeException error(JsonPath path, String problem) {
        return new PayloadDecodeException(path + ": malformed JSON at offset " + position + ": " + problem);
    }
}
