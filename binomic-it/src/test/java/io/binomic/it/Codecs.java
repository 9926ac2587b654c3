package io.binomic.it;

import io.binomic.api.spi.PayloadCodec;
import java.util.ServiceLoader;

/** The codecs found by ServiceLoader, as a Binomic instance finds them. */
final class Codecs {
    private Codecs() { }

    static PayloadCodec byId(String id) {
        return ServiceLoader.load(PayloadCodec.class).stream().map(ServiceLoader.Provider::get)
                .filter(c -> c.id().equals(id)).findFirst().orElseThrow();
    }
}
