/**
 * Service-provider interfaces: implement these to plug in a broker ({@link io.binomic.api.spi.BrokerProvider}),
 * a payload codec ({@link io.binomic.api.spi.PayloadCodec}), the scheduler that keeps a broker's deferred work
 * ({@link io.binomic.api.spi.SchedulerProvider})
 * or to hand an application's tasks to worker processes ({@link io.binomic.api.spi.TaskProvider}).
 * Providers are found with {@link java.util.ServiceLoader}: declare them with {@code provides} in
 * {@code module-info.java} and in {@code META-INF/services} for classpath users.
 */
package io.binomic.api.spi;
