/**
 * The types a Binomic user touches: task declarations, messages, configuration records,
 * exceptions ({@code io.binomic.api}) and the service-provider interfaces that brokers,
 * schedulers, codecs and task providers implement ({@code io.binomic.api.spi}).
 * Pure JDK: no third-party dependency.
 */
@SuppressWarnings("module") // the qualified export names io.binomic.core, built after this module
module io.binomic.api {
    exports io.binomic.api;
    exports io.binomic.api.spi;
    // Binds the TaskContext of a running handler, and the builders' settings given once: the core's
    // business, not the application's.
    exports io.binomic.api.internal to io.binomic.core;

    uses io.binomic.api.spi.BrokerProvider;
    uses io.binomic.api.spi.PayloadCodec;
    uses io.binomic.api.spi.RunObserver;
    uses io.binomic.api.spi.SchedulerProvider;
    uses io.binomic.api.spi.TaskProvider;
    uses io.binomic.api.spi.TraceContextProvider;
}
