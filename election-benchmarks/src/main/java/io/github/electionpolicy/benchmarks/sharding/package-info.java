/**
 * The sharding benchmark: a synthetic controller's throughput over 1 to 5 replicas of a sharded runner, the time to
 * a fair share again as replicas join and leave, the longest time a shard went unowned, and keys reconciled by two
 * replicas at once (counted). See docs/performance.md.
 */
package io.github.electionpolicy.benchmarks.sharding;
