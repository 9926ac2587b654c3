package io.binomic.redis.internal;

import io.binomic.api.Priority;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the broker's Lua scripts, resources of this package ({@code io/binomic/redis/internal/*.lua},
 * read by this module's own class, so on the module path, the class path and in a jlink image
 * alike). Each script is the head of {@code lib.lua} (its constants and shared state, everything
 * before its first function), the library functions the script names (directly or through others,
 * in the library's order), then the script's own file: one chunk per script, assembled once, when
 * its handle's class is initialised. Only what it names: Redis runs the whole chunk on every call,
 * and each function defined costs a closure each time (the whole library cost about 1.3 µs a call,
 * a tenth of a unique submit's script). Redisson
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
    private static final Pattern FUNCTION = Pattern.compile("(?m)^local function ([a-z_]+)\\(");
    /** The library's functions by name, in its order, each with the text up to the next one. */
    private static final Map<String, String> FUNCTIONS = functions(LIBRARY);
    /** The library before its first function. */
    private static final String HEAD = LIBRARY.substring(0, FUNCTION.matcher(LIBRARY).results().findFirst()
            .map(MatchResult::start).orElse(LIBRARY.length()));

    private LuaSources() { }

    /** Each script's file by the SHA1 of its text, as Redis names a script in an error raised inside it. */
    private static final Map<String, String> FILES_BY_SHA = new ConcurrentHashMap<>();
    /** The text of each script file read so far, for the commands it calls. */
    private static final Map<String, String> TEXTS = new ConcurrentHashMap<>();
    /** Each script's whole text (head, library functions, own file) by its SHA1, for the line a refused call is on. */
    private static final Map<String, String> SCRIPTS_BY_SHA = new ConcurrentHashMap<>();
    private static final Pattern CALL = Pattern.compile("redis\\.p?call\\('([A-Za-z]+)'(?:\\s*,\\s*'([A-Z]+)')?");

    /** The script of {@code file}, after the head of the library and the library functions it uses. */
    static String script(String file) {
        String own = read(file);
        Set<String> used = functionsUsedBy(own);
        StringBuilder text = new StringBuilder(HEAD);
        FUNCTIONS.forEach((name, body) -> {
            if (used.contains(name)) {
                text.append(body);
            }
        });
        return register(file, own, text.append(own).toString());
    }

    private static String register(String file, String own, String text) {
        TEXTS.put(file, own);
        String sha = sha1(text);
        FILES_BY_SHA.put(sha, file);
        SCRIPTS_BY_SHA.put(sha, text);
        return text;
    }

    /**
     * The commands that the script whose SHA1 is {@code sha} calls on its line {@code line} (from 1, as Redis 7.0 names
     * the line of a refused call: {@code @user_script:<line>}), as an ACL rule names them, in the line's order; empty
     * when that line names none itself (the script is not one of ours, or passes the command as a variable).
     */
    static Set<String> commandsAt(String sha, int line) {
        String text = SCRIPTS_BY_SHA.get(sha.toLowerCase(Locale.ROOT));
        List<String> lines = text == null ? List.of() : text.lines().toList();
        if (line < 1 || line > lines.size()) {
            return Set.of();
        }
        Set<String> commands = new LinkedHashSet<>();
        Matcher c = CALL.matcher(COMMENT.matcher(lines.get(line - 1)).replaceAll(""));
        while (c.find()) {
            commands.add(aclName(c));
        }
        return commands;
    }

    /** The file of the script whose SHA1 (as {@code EVALSHA} and Redis' errors name it) is {@code sha}, if it is one of ours. */
    static Optional<String> fileOf(String sha) {
        return Optional.ofNullable(FILES_BY_SHA.get(sha.toLowerCase(Locale.ROOT)));
    }

    /**
     * The Redis commands the script of {@code file} may call, its own and those of the library
     * functions it calls (directly or through others), as an ACL rule names them: {@code xadd},
     * {@code xgroup|create}.
     */
    static Set<String> commandsOf(String file) {
        String own = TEXTS.getOrDefault(file, "");
        List<String> bodies = new ArrayList<>(List.of(HEAD, own));
        functionsUsedBy(own).forEach(fn -> bodies.add(FUNCTIONS.get(fn)));
        Set<String> commands = new TreeSet<>();
        for (String body : bodies) {
            Matcher c = CALL.matcher(body);
            while (c.find()) {
                commands.add(aclName(c));
            }
        }
        return commands;
    }

    /** The command of a {@link #CALL} match as an ACL rule names it: {@code xadd}, {@code xgroup|create}. */
    private static String aclName(Matcher call) {
        String command = call.group(1).toLowerCase(Locale.ROOT);
        boolean container = command.equals("xgroup") || command.equals("xinfo");
        return container && call.group(2) != null ? command + "|" + call.group(2).toLowerCase(Locale.ROOT) : command;
    }

    private static final Pattern COMMENT = Pattern.compile("--[^\n]*");

    /**
     * The library functions {@code text} names in its code, directly or through the functions it
     * names: any mention as a word, a call or not (a function passed as an argument). Comments are
     * left out (no script has {@code --} in a string).
     */
    static Set<String> functionsUsedBy(String text) {
        Set<String> used = new HashSet<>();
        Deque<String> bodies = new ArrayDeque<>(List.of(text));
        while (!bodies.isEmpty()) {
            String body = COMMENT.matcher(bodies.pop()).replaceAll("");
            FUNCTIONS.forEach((fn, fnBody) -> {
                if (!used.contains(fn) && Pattern.compile("(?<![A-Za-z0-9_])" + fn + "(?![A-Za-z0-9_])").matcher(body).find()) {
                    used.add(fn);
                    bodies.push(fnBody);
                }
            });
        }
        return used;
    }

    private static Map<String, String> functions(String library) {
        Map<String, String> functions = new LinkedHashMap<>();
        List<MatchResult> starts = FUNCTION.matcher(library).results().toList();
        for (int i = 0; i < starts.size(); i++) {
            int end = i + 1 < starts.size() ? starts.get(i + 1).start() : library.length();
            functions.put(starts.get(i).group(1), library.substring(starts.get(i).start(), end));
        }
        return functions;
    }

    private static String sha1(String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-1, which every JDK must have", e);
        }
    }

    /** The library, its constants substituted. */
    static String library() { return LIBRARY; }

    /** The head of the library: what every script starts with. */
    static String libraryHead() { return HEAD; }

    private static String substitute(String text) {
        return PLACEHOLDER.matcher(text).replaceAll(m -> {
            String value = CONSTANTS.get(m.group(1));
            if (value == null) {
                throw new IllegalStateException(LIBRARY_FILE + " names an unknown constant {{" + m.group(1) + "}}");
            }
            return Matcher.quoteReplacement(value);
        });
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
