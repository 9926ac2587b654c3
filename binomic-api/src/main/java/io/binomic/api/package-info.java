/**
 * What Binomic users touch: {@link io.binomic.api.Task} declarations,
 * configuration records ({@link io.binomic.api.BinomicConfig} and its parts), dead letters and the
 * exception hierarchy rooted at {@link io.binomic.api.BinomicException}.
 */
package io.binomic.api;
