package io.binomic.core;

import io.binomic.api.spi.Activity;
import io.binomic.api.spi.Broker;
import io.binomic.api.spi.DeadLetterStore;
import io.binomic.api.spi.FlowLimitReadings;
import io.binomic.api.spi.FlowLimits;
import io.binomic.api.spi.JobStore;
import io.binomic.api.spi.PendingDeliveries;
import io.binomic.api.spi.Partitioning;
import io.binomic.api.spi.Pausing;
import io.binomic.api.spi.SettledCleanup;
import io.binomic.api.spi.UniqueSubmits;

/** The capabilities a contract suite tests: a broker under test that lacks one fails the suite. */
public final class BrokerCapabilities {

    private BrokerCapabilities() {
    }

    public static <T> T of(Broker broker, Class<T> type) {
        return broker.capability(type).orElseThrow(() -> new AssertionError(broker + " has no " + type.getSimpleName() + " capability"));
    }

    public static JobStore jobStore(Broker broker) {
        return of(broker, JobStore.class);
    }

    public static DeadLetterStore deadLetterStore(Broker broker) {
        return of(broker, DeadLetterStore.class);
    }

    public static FlowLimits flowLimits(Broker broker) {
        return of(broker, FlowLimits.class);
    }

    public static FlowLimitReadings flowLimitReadings(Broker broker) {
        return of(broker, FlowLimitReadings.class);
    }

    public static UniqueSubmits uniqueSubmits(Broker broker) {
        return of(broker, UniqueSubmits.class);
    }

    public static Pausing pausing(Broker broker) {
        return of(broker, Pausing.class);
    }

    public static Partitioning partitioning(Broker broker) {
        return of(broker, Partitioning.class);
    }

    public static Activity activity(Broker broker) {
        return of(broker, Activity.class);
    }

    public static PendingDeliveries pendingDeliveries(Broker broker) {
        return of(broker, PendingDeliveries.class);
    }

    public static SettledCleanup settledCleanup(Broker broker) {
        return of(broker, SettledCleanup.class);
    }
}
