/**
 * A Micrometer {@link io.micrometer.core.instrument.binder.MeterBinder} for a
 * {@link io.binomic.core.Binomic} client: {@link io.binomic.micrometer.BinomicMeterBinder}. Kept
 * out of the core, which stays free of dependencies.
 */
module io.binomic.micrometer {
    requires transitive io.binomic.core;
    requires transitive micrometer.core;

    exports io.binomic.micrometer;
}
