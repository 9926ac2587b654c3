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
