/**
 * The side-by-side failover benchmark: several replicas of each leader-election implementation contend for a
 * Lease on one fabric8 mock API server in CRUD mode (or, with {@code kubeconfig=PATH}, on a real API server: see
 * {@link io.github.electionpolicy.benchmarks.failover.ServerMode}), and the harness measures graceful hand-over,
 * crash take-over and Lease request load from one shared, monotonic {@link
 * io.github.electionpolicy.benchmarks.failover.EventLog}. The entry point is {@link
 * io.github.electionpolicy.benchmarks.failover.FailoverBenchmark}; an implementation joins the comparison by
 * implementing {@link io.github.electionpolicy.benchmarks.failover.Contender}.
 */
package io.github.electionpolicy.benchmarks.failover;
