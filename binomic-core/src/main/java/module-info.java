/**
 * Binomic's engine: the {@link io.binomic.core.Binomic} client, workers, the scheduler, the
 * embedded in-memory broker ({@code memory://}) and a JDK-only JSON codec. Only
 * {@code io.binomic.core} is exported; everything else is implementation.
 */
module io.binomic.core {
    requires transitive io.binomic.api;
    requires jdk.jfr;

    exports io.binomic.core;

    uses io.binomic.api.spi.BrokerProvider;
    uses io.binomic.api.spi.PayloadCodec;
    uses io.binomic.api.spi.TaskProvider;

    provides io.binomic.api.spi.BrokerProvider with io.binomic.core.internal.memory.MemoryBrokerProvider;
    provides io.binomic.api.spi.PayloadCodec with io.binomic.core.internal.codec.JdkJsonCodec;
}
