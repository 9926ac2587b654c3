package io.binomic.redis.internal;

import io.binomic.api.BrokerPermissionException;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Redis refusing a command to the connection's ACL user, as one line that names the user, what
 * it lacks and the fix. Outside a script Redis names the command ({@code NOPERM this user has no
 * permissions to run the 'xadd' command}); inside one, Redis 7.0 names only the script's SHA1
 * ({@code ... can't run this command or subcommand script: <sha>, on @user_script:<line>}), so
 * the SHA is mapped back to the script's file ({@link LuaSources#fileOf}) and the command called on
 * that line is named, or, when the line names none, the commands that script calls are listed: one
 * of them is the missing one.
 */
final class PermissionReplies {
    private static final Pattern COMMAND = Pattern.compile("permissions to run the '([^']+)' command");
    private static final Pattern SCRIPT = Pattern.compile("script: ([0-9a-fA-F]{40})(?:, on @user_script:(\\d+))?");
    private static final String IN_SCRIPT = "The user executing the script can't";
    /**
     * Running it as another user comes first: a reader refused an operator's write is meant to be refused, and granting
     * the command would make it a writer.
     */
    static final String RUN_AS = "run it as a user whose rule set has it (a reader's has no command that writes; a worker's"
            + " has the operator's: pause, limits, dead-letter replay and purge), or, if this user is meant to run it, grant it: ";
    static final String RULE_SETS = "the rule sets of a worker, a producer and a reader are in module-info-docs/redis.md, section"
            + " ACL rule sets";

    private PermissionReplies() { }

    /** True when {@code failure} is Redis refusing a command or a key to the connection's ACL user. */
    static boolean isRefused(Throwable failure) { return reply(failure).isPresent(); }

    private static Optional<String> reply(Throwable failure) {
        for (Throwable c = failure; c != null; c = c.getCause()) {
            String m = String.valueOf(c.getMessage());
            int at = m.contains("NOPERM") ? m.indexOf("NOPERM") : m.indexOf(IN_SCRIPT);
            if (at >= 0) {
                // Redis' own words only: Redisson appends the channel and the command's arguments
                String words = m.substring(at);
                int channel = words.indexOf(" channel:");
                return Optional.of(channel < 0 ? words : words.substring(0, channel));
            }
        }
        return Optional.empty();
    }

    /** The exception of an {@link #isRefused} failure of {@code what} at {@code target}, run as {@code user}. */
    static BrokerPermissionException failure(String target, String user, String what, Throwable cause) {
        String reply = reply(cause).orElse(String.valueOf(cause.getMessage()));
        boolean key = reply.contains("access one of the") || reply.contains("access at least one of the");
        String lacks;
        String fix;
        Matcher command = COMMAND.matcher(reply);
        Matcher script = SCRIPT.matcher(reply);
        if (command.find()) {
            String name = command.group(1).toLowerCase(Locale.ROOT);
            lacks = "command " + name;
            fix = "ACL SETUSER " + user + " +" + name;
        } else if (script.find()) {
            String sha = script.group(1);
            String file = LuaSources.fileOf(sha).orElse(null);
            String refused = key ? "a key or channel" : "a command";
            Set<String> atLine = key || script.group(2) == null ? Set.of()
                    : LuaSources.commandsAt(sha, Integer.parseInt(script.group(2)));
            if (file != null && atLine.size() == 1) {
                lacks = "command " + atLine.iterator().next() + " (Lua script " + file + " calls it on line " + script.group(2) + ")";
                fix = "ACL SETUSER " + user + " +" + atLine.iterator().next();
            } else if (file != null && !atLine.isEmpty()) {
                lacks = "one of the commands " + String.join(" ", atLine) + " (Lua script " + file + " calls them on line "
                        + script.group(2) + ")";
                fix = "ACL SETUSER " + user + " +" + String.join(" +", atLine);
            } else if (file == null) {
                lacks = refused + " in Lua script " + sha + " (not one of Binomic's)";
                fix = "grant what that script calls";
            } else {
                String calls = String.join(" ", LuaSources.commandsOf(file));
                lacks = refused + " that Lua script " + file + " (SHA1 " + sha + ") calls (Redis 7.0 does not say which;"
                        + " the script calls " + calls + ")";
                fix = key ? "ACL SETUSER " + user + " ~<keyPrefix>:* &<keyPrefix>:*"
                        : "ACL SETUSER " + user + " +" + String.join(" +", LuaSources.commandsOf(file));
            }
        } else if (key) {
            lacks = "access to a key or channel of the command";
            fix = "ACL SETUSER " + user + " ~<keyPrefix>:* &<keyPrefix>:* (BrokerConfig.keyPrefix, default binomic)";
        } else {
            lacks = "a permission";
            fix = "ACL SETUSER " + user + " with what the call needs";
        }
        return new BrokerPermissionException("Redis at " + target + " refused " + what + ": ACL user '" + user + "' lacks " + lacks
                + " (NOPERM): " + RUN_AS + fix + "; " + RULE_SETS, fix, cause);
    }
}
