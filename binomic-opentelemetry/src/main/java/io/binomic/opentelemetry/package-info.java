/**
 * OpenTelemetry spans for Binomic's submits and runs: {@link io.binomic.opentelemetry.BinomicTelemetry}.
 */
package io.binomic.opentelemetry;
