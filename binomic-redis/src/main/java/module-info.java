/**
 * The Redis Streams broker ({@code redis://}, {@code rediss://}) on Redisson, its durable
 * scheduler (delayed sets and tick claims), and the Jackson JSON payload codec. Exports nothing:
 * applications reach them through the SPIs of {@code io.binomic.api}, found with {@link java.util.ServiceLoader}.
 *
 * <p>Redisson is an automatic module that reads only what something requires: launch with
 * {@code --add-modules ALL-MODULE-PATH}.
 */
module io.binomic.redis {
    requires io.binomic.api;
    requires redisson;
    requires io.netty.buffer;
    requires com.fasterxml.jackson.databind;
    requires com.fasterxml.jackson.datatype.jsr310;
    requires com.fasterxml.jackson.datatype.jdk8;

    provides io.binomic.api.spi.BrokerProvider with io.binomic.redis.internal.RedisBrokerProvider;
    provides io.binomic.api.spi.PayloadCodec with io.binomic.redis.internal.JacksonPayloadCodec;
    provides io.binomic.api.spi.SchedulerProvider with io.binomic.redis.internal.RedisSchedulerProvider;
}
