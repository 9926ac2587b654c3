/**
 * Binomic's engine: the {@link io.binomic.core.Binomic} client, workers, the periodic
 * scheduler, the embedded in-memory broker ({@code memory://}) and its scheduler and a JDK-only JSON codec. Exports
 * {@code io.binomic.core} and, for applications' own unit tests, {@code io.binomic.core.testing};
 * everything else is implementation.
 */
// The qualified exports name io.binomic.jdbc, io.binomic.micrometer and the Spring Boot auto-configuration, built after this module.
@SuppressWarnings("module")
module io.binomic.core {
    requires transitive io.binomic.api;
    requires jdk.jfr;
    // The dashboard and /metrics: the JDK's own HTTP server keeps the core free of dependencies.
    requires jdk.httpserver;
    // The CLI's one-shot commands set the level of the JDK's default System.Logger backend.
    requires java.logging;
    // The master weighs its workers' heap options against the machine's memory (com.sun.management.OperatingSystemMXBean).
    requires java.management;
    requires jdk.management;
    // A worker JVM and the master drain on SIGTERM, SIGINT and SIGHUP before the JVM shuts down (sun.misc.Signal, used reflectively): in a
    // shutdown hook, the logging backend's own hook would close its handlers while the drain still logs.
    requires jdk.unsupported;

    exports io.binomic.core;
    exports io.binomic.core.testing;
    // The outbox's command line reads the broker settings (file, BINOMIC_* variables) as the binomic command does; the
    // auto-configuration names the property of each of the command's variables that a Boot application would ignore.
    exports io.binomic.core.internal.process to io.binomic.jdbc, io.binomic.spring.boot.autoconfigure;
    // ... and refuses unknown options with the binomic command's own parser; the auto-configuration's "did you mean" for a
    // mistyped property is the command's own (an automatic module: its name is set in its jar's manifest).
    exports io.binomic.core.internal.cli to io.binomic.jdbc, io.binomic.spring.boot.autoconfigure;
    // The auto-configuration checks a broker option the binomic command's variable sets, and reports one the broker
    // refuses, against the broker's own list (Providers, UnknownBrokerOptionException), as the command does.
    exports io.binomic.core.internal to io.binomic.spring.boot.autoconfigure;
    // The Micrometer binder reads flow limits as /metrics does, with the same gauges.
    exports io.binomic.core.internal.web to io.binomic.micrometer;

    uses io.binomic.api.spi.BrokerProvider;
    uses io.binomic.api.spi.PayloadCodec;
    uses io.binomic.api.spi.RunObserver;
    uses io.binomic.api.spi.SchedulerProvider;
    uses io.binomic.api.spi.TaskProvider;
    uses io.binomic.api.spi.TraceContextProvider;

    provides io.binomic.api.spi.BrokerProvider with io.binomic.core.internal.memory.MemoryBrokerProvider;
    provides io.binomic.api.spi.PayloadCodec with io.binomic.core.internal.codec.JdkJsonCodec;
    provides io.binomic.api.spi.SchedulerProvider with io.binomic.core.internal.memory.MemorySchedulerProvider;
}
