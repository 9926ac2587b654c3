package io.binomic.core.internal.process;

import java.util.List;

/** JVM options for the child JVMs of tests: start fast and stay small on a shared two-core machine. */
final class TestJvm {
    static final List<String> OPTIONS = List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx64m",
            "-Xshare:auto");

    private TestJvm() { }
}
