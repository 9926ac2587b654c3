package io.binomic.api;

import java.io.Serial;

/**
 * The broker's server runs with a setting under which Binomic could lose jobs (Redis: a
 * {@code maxmemory-policy} that evicts keys), and no option accepts that risk, so the start was
 * refused. Trying again does not help: the setting must be changed on the server, or the risk
 * accepted by the broker option the message names. Unlike a broker that cannot be reached, this is
 * a refusal of the configuration, as a bad setting of Binomic's own would be.
 */
public class UnsafeBrokerSettingException extends BrokerException {
    @Serial private static final long serialVersionUID = 1L;

    public UnsafeBrokerSettingException(String message) { super(message); }
}
