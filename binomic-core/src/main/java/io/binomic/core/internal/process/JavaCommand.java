package io.binomic.core.internal.process;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command line of a child JVM that runs a main class of this module with the same Java and
 * the same modules as the current JVM: on the module path when this JVM runs on it (the
 * {@code jdk.module.path} property is set and this module is named), on the class path otherwise.
 */
public final class JavaCommand {
    private JavaCommand() { }

    /**
     * The command: {@code java --enable-preview <jvmOptions> <module path or class path> <main> <args>}.
     * {@code --enable-preview} so that task code may use Java 25's preview APIs (such as
     * {@code StructuredTaskScope}); {@code --add-modules ALL-MODULE-PATH} because the application's
     * modules (task providers, the Redis broker and its automatic-module dependencies) are found
     * only by services, and nothing {@code requires} them.
     */
    public static List<String> of(Class<?> mainClass, List<String> jvmOptions, List<String> args) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("--enable-preview");
        command.addAll(jvmOptions);
        String modulePath = System.getProperty("jdk.module.path");
        Module module = mainClass.getModule();
        if (modulePath != null && module.isNamed()) {
            command.addAll(List.of("--module-path", modulePath, "--add-modules", "ALL-MODULE-PATH", "-m",
                    module.getName() + "/" + mainClass.getName()));
        } else {
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), mainClass.getName()));
        }
        command.addAll(args);
        return command;
    }
}
