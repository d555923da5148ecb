/**
 * The scale benchmark: many elections in one JVM through one shared client, threads, heap and time to lead,
 * ours beside stock fabric8; and the first-election probe, which breaks one replica's time to lead down by
 * request. See docs/performance.md.
 */
package io.github.electionpolicy.benchmarks.scale;
