/**
 * Service-provider interfaces: implement these to plug in a broker ({@link io.binomic.api.spi.BrokerProvider}),
 * a payload codec ({@link io.binomic.api.spi.PayloadCodec}), the scheduler that keeps a broker's deferred work
 * ({@link io.binomic.api.spi.SchedulerProvider})
 * or to hand an application's tasks to worker processes ({@link io.binomic.api.spi.TaskProvider}); and the hooks a
 * tracer uses: the submitting thread's trace context ({@link io.binomic.api.spi.TraceContextProvider}) and each
 * run of a handler ({@link io.binomic.api.spi.RunObserver}).
 * Providers are found with {@link java.util.ServiceLoader}: declare them with {@code provides} in
 * {@code module-info.java} and in {@code META-INF/services} for classpath users.
 */
package io.binomic.api.spi;
