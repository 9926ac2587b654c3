package io.binomic.it;

import io.binomic.core.PauseContractTest;

/** Pause, resume and drain on a real Redis: the paused set and the parked messages of the pause scripts. */
class RedisPauseContractTest extends PauseContractTest {
    @Override
    protected String brokerUrl() {
        return RedisServer.shared().url();
    }
}
