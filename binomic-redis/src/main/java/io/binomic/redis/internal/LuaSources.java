package io.binomic.redis.internal;

import io.binomic.api.Priority;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the broker's Lua scripts, resources of this package ({@code io/binomic/redis/internal/*.lua},
 * read by this module's own class, so on the module path, the class path and in a jlink image
 * alike). Each script is {@code lib.lua}, the functions the scripts share, followed by the script's
 * own file: one chunk per script, assembled once, when its handle's class is initialised. Redisson
 * then sends it by SHA1 ({@code EVALSHA}, hashed once per script text by its cache) and loads it
 * when Redis answers {@code NOSCRIPT}.
 *
 * <p>The library may name Java constants as {@code {{NAME}}}; they are substituted here, once, from
 * {@link #CONSTANTS}, and a name not there fails the load, so a script never runs with a
 * placeholder left in it.
 */
final class LuaSources {
    static final String LIBRARY_FILE = "lib.lua";
    private static final Pattern PLACEHOLDER = Pattern.compile("\\{\\{([A-Z_]+)}}");
    /** The Java constants the library names: the default priority (level_stream) and the consumer group. */
    static final Map<String, String> CONSTANTS = Map.of(
            "DEFAULT_PRIORITY", Integer.toString(Priority.DEFAULT),
            "GROUP", RedisKeys.GROUP);
    private static final String LIBRARY = substitute(read(LIBRARY_FILE));

    private LuaSources() { }

    /** The script of {@code file}, after the library. */
    static String script(String file) {
        return LIBRARY + read(file);
    }

    /** The library, its constants substituted. */
    static String library() {
        return LIBRARY;
    }

    private static String substitute(String text) {
        Matcher m = PLACEHOLDER.matcher(text);
        StringBuilder out = new StringBuilder(text.length());
        while (m.find()) {
            String value = CONSTANTS.get(m.group(1));
            if (value == null) {
                throw new IllegalStateException(LIBRARY_FILE + " names an unknown constant {{" + m.group(1) + "}}");
            }
            m.appendReplacement(out, Matcher.quoteReplacement(value));
        }
        m.appendTail(out);
        return out.toString();
    }

    private static String read(String file) {
        try (InputStream in = LuaSources.class.getResourceAsStream(file)) {
            if (in == null) {
                throw new IllegalStateException("Lua script " + file + " is missing from module io.binomic.redis");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("reading Lua script " + file, e);
        }
    }
}
