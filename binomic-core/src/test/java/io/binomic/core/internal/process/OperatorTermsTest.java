package io.binomic.core.internal.process;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

class OperatorTermsTest {
    @Test
    void apiSettingsAreNamedAsKeysAndVariables() {
        assertEquals("check broker.password (BINOMIC_BROKER_PASSWORD) and BrokerConfig.nothing",
                OperatorTerms.inSettingsTerms("check BrokerConfig.password and BrokerConfig.nothing"));
    }

    /** Found by an outside tester: the CLI's TLS errors named the Java API's option, not its key or variable. */
    @Test
    void aBrokerOptionIsNamedAsItsKeyAndVariable() {
        assertEquals("add the server's CA to the trust store (broker.option.tls.truststore (BINOMIC_BROKER_OPTION_TLS_TRUSTSTORE),"
                        + " or the JDK's); its password in tls.truststore.password",
                OperatorTerms.inSettingsTerms("add the server's CA to the trust store (BrokerConfig option tls.truststore, or the"
                        + " JDK's); its password in tls.truststore.password"));
    }

    @Test
    void theBrokerUrlIsNamedAsTheFlagToo() {
        assertEquals("check --broker or broker.url (BINOMIC_BROKER_URL)", OperatorTerms.inOperatorTerms("check BrokerConfig.url"));
    }

    @Test
    void aBuilderMessageNamesTheKeysOfItsFields() {
        assertEquals(List.of("worker.leaseTimeout", "worker.pollTimeout"),
                OperatorTerms.keysNamedIn("leaseTimeout must be longer than pollTimeout, was 1s"));
    }
}
