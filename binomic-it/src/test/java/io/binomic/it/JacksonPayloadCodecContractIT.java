package io.binomic.it;

import io.binomic.api.spi.PayloadCodec;
import io.binomic.core.PayloadCodecContractTest;

/** The codec contract for the Jackson codec of io.binomic.redis, found as applications find it. */
class JacksonPayloadCodecContractIT extends PayloadCodecContractTest {
    private final PayloadCodec codec = Codecs.byId("jackson");

    @Override
    protected PayloadCodec codec() {
        return codec;
    }
}
