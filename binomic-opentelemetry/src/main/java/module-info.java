/**
 * OpenTelemetry spans for Binomic: a {@code PRODUCER} span for each submit and a {@code CONSUMER}
 * span for each run of a handler, with OpenTelemetry's messaging conventions, the run's span
 * the child of (and linked to) the submit's across processes, retries and replays. Put this
 * module on the module path (or its jar on the class path) beside {@code opentelemetry-api}: the
 * core finds {@link io.binomic.opentelemetry.BinomicTelemetry} with {@link java.util.ServiceLoader}.
 */
module io.binomic.opentelemetry {
    requires transitive io.binomic.api;
    requires transitive io.opentelemetry.api;
    requires io.opentelemetry.context;

    exports io.binomic.opentelemetry;

    provides io.binomic.api.spi.TraceContextProvider with io.binomic.opentelemetry.BinomicTelemetry;
    provides io.binomic.api.spi.RunObserver with io.binomic.opentelemetry.BinomicTelemetry;
}
