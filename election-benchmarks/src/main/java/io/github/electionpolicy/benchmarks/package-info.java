/**
 * Benchmarks of election-policy, run by hand and not published: {@link
 * io.github.electionpolicy.benchmarks.DecideBenchmark} measures the core decision with JMH, and {@link
 * io.github.electionpolicy.benchmarks.failover.FailoverBenchmark} compares failover of our fabric8 adapter
 * with the stock fabric8 {@code LeaderElector}. Commands and results: {@code docs/performance.md}.
 */
package io.github.electionpolicy.benchmarks;
