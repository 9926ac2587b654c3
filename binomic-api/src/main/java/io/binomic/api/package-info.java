/**
 * What Binomic users touch: {@link io.binomic.api.Task} declarations, {@link io.binomic.api.Message},
 * configuration records ({@link io.binomic.api.BinomicConfig} and its parts), dead letters and the
 * exception hierarchy rooted at {@link io.binomic.api.BinomicException}.
 */
package io.binomic.api;
