package io.binomic.api.spi;

import java.util.List;

/**
 * A {@link Broker} capability of a broker whose {@link Broker#fetch} can hand out entries the
 * caller never received (a reply lost to a timeout leaves them pending under the consumer). A
 * broker whose fetch cannot do that has nothing to recover and does not offer it.
 */
public interface PendingDeliveries {

    /**
     * The deliveries of {@code queue} pending under {@code consumer}, up to {@code max}, without
     * changing them (no delivery is counted). A worker calls it after a fetch failed in a way that
     * may have delivered entries it never received, to run those: they would otherwise wait a whole
     * lease, and come back as one attempt more than they ran.
     */
    List<Delivery> pendingOf(String queue, String consumer, int max);
}
