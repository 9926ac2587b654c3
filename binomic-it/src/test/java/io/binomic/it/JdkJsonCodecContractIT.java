package io.binomic.it;

import io.binomic.api.spi.PayloadCodec;
import io.binomic.core.PayloadCodecContractTest;

/**
 * The codec contract for the JDK codec, here beside Jackson: the two pass the same expected JSON,
 * so they agree byte for byte on the same records.
 */
class JdkJsonCodecContractIT extends PayloadCodecContractTest {
    private final PayloadCodec codec = Codecs.byId("json-jdk");

    @Override
    protected PayloadCodec codec() {
        return codec;
    }
}
