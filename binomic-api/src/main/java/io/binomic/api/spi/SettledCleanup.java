package io.binomic.api.spi;

/**
 * A {@link Broker} capability of a broker that keeps settled entries behind to make settling
 * cheap (the Redis broker acks without deleting and trims acknowledged entries in bulk). A broker
 * that removes an entry when it is settled does not offer it.
 */
public interface SettledCleanup {

    /**
     * Removes the settled entries of {@code queue} kept behind. Workers call it periodically, so
     * what the last settlements left behind does not stay. Returns how many were removed.
     */
    long removeSettled(String queue);
}
