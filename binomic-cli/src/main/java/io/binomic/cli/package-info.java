/**
 * The executable jar's entry point: {@link io.binomic.cli.Main}.
 */
package io.binomic.cli;
