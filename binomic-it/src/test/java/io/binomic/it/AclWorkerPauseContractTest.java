package io.binomic.it;

import io.binomic.core.PauseContractTest;

/** Pause, resume and drain on a real Redis, connected as the worker ACL user of the documented rule sets. */
class AclWorkerPauseContractTest extends PauseContractTest {
    @Override
    protected String brokerUrl() {
        return AclRedis.url(AclRedis.shared(), AclRedis.WORKER);
    }
}
