package io.binomic.core.internal.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code binomic} command's option parsing for the command-line tools of Binomic's other modules
 * (binomic-jdbc's OutboxTool), so that they refuse what the {@code binomic} command refuses, in the same
 * words: an unknown option (with the declared one it most likely meant), a missing value, a positional
 * word, an option given twice, a number that is not one.
 */
public final class ToolOptions {
    private final Arguments arguments;

    private ToolOptions(Arguments arguments) { this.arguments = arguments; }

    /**
     * Parses {@code args} against the options a tool declares (names without their dashes).
     *
     * @throws IllegalArgumentException naming the wrong option and, for a mistyped one, the closest declared one
     */
    public static ToolOptions parse(List<String> args, List<String> valueOptions, List<String> flags) {
        List<Option> options = new ArrayList<>();
        valueOptions.forEach(name -> options.add(Option.value(name, "VALUE", "")));
        flags.forEach(name -> options.add(Option.flag(name, "")));
        try {
            return new ToolOptions(Arguments.parse(args, options));
        } catch (UsageException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    public boolean has(String name) { return arguments.has(name); }

    public Optional<String> value(String name) { return arguments.value(name); }

    /**
     * The whole number of {@code --name}, at least {@code min}; {@code defaultValue} when absent.
     *
     * @throws IllegalArgumentException naming the option when its value is not a whole number or below {@code min}
     */
    public int intValue(String name, int defaultValue, int min) {
        try {
            return arguments.intValue(name, defaultValue, min);
        } catch (UsageException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }
}
