package io.binomic.core.internal.cli;

/**
 * One {@code --name} a command accepts.
 *
 * @param name the option without its dashes
 * @param valueName what its value is, shown in the usage ({@code URL}, {@code N}); null for a flag
 * @param description one line of help, ending with the default where there is one
 * @param repeatable whether it may be given more than once
 */
record Option(String name, String valueName, String description, boolean repeatable) {

    static Option value(String name, String valueName, String description) { return new Option(name, valueName, description, false); }

    static Option repeatable(String name, String valueName, String description) { return new Option(name, valueName, description, true); }

    static Option flag(String name, String description) { return new Option(name, null, description, false); }

    boolean isFlag() { return valueName == null; }

    /** {@code --name VALUE} or {@code --name}, as the usage shows it. */
    String synopsis() { return "--" + name + (isFlag() ? "" : " " + valueName); }
}
