/**
 * The Redis Streams broker ({@code redis://}, {@code rediss://}) on Redisson, its durable
 * scheduler (delayed sets and tick claims), and the Jackson JSON payload codec. Exports nothing:
 * applications reach them through the SPIs of {@code io.binomic.api}, found with {@link java.util.ServiceLoader}.
 *
 * <p>Redisson is an automatic module: it reads every module in the graph but brings none of the
 * explicit ones into it. This module requires the explicit modules Redisson's classes use (as
 * {@code jdeps} lists them), so that it runs from the module path without {@code --add-modules}.
 */
module io.binomic.redis {
    requires io.binomic.api;
    requires redisson;
    requires io.netty.buffer;
    // Used by Redisson, not by this module's own classes.
    requires io.netty.codec;
    requires io.netty.common;
    requires io.netty.handler;
    requires io.netty.resolver;
    requires io.netty.resolver.dns;
    requires io.netty.transport;
    requires io.netty.transport.unix.common;
    requires io.reactivex.rxjava3;
    requires net.bytebuddy;
    requires org.slf4j;
    requires org.yaml.snakeyaml;
    requires java.management;
    requires java.naming;
    requires java.xml;
    requires com.fasterxml.jackson.databind;
    requires com.fasterxml.jackson.datatype.jsr310;
    requires com.fasterxml.jackson.datatype.jdk8;

    provides io.binomic.api.spi.BrokerProvider with io.binomic.redis.internal.RedisBrokerProvider;
    provides io.binomic.api.spi.PayloadCodec with io.binomic.redis.internal.JacksonPayloadCodec;
    provides io.binomic.api.spi.SchedulerProvider with io.binomic.redis.internal.RedisSchedulerProvider;
}
