/**
 * The types a Binomic user touches: task declarations, messages, configuration records,
 * exceptions ({@code io.binomic.api}) and the service-provider interfaces that brokers,
 * schedulers, codecs and task providers implement ({@code io.binomic.api.spi}).
 * Pure JDK: no third-party dependency.
 */
module io.binomic.api {
    exports io.binomic.api;
    exports io.binomic.api.spi;

    uses io.binomic.api.spi.BrokerProvider;
    uses io.binomic.api.spi.PayloadCodec;
    uses io.binomic.api.spi.TaskProvider;
}
