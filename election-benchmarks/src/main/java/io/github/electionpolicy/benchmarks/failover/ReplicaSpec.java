package io.github.electionpolicy.benchmarks.failover;

import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Everything a {@link ContenderFactory} needs to build one replica. Immutable; the client is the replica's
 * own and is thread-safe.
 *
 * @param identity the replica's holder identity, unique in the run
 * @param namespace namespace of the Lease
 * @param leaseName name of the Lease, one per round
 * @param timings lease duration, renew deadline and retry period
 * @param client the replica's own client; its requests are attributed to {@code identity} by the server
 * @param recorder what to call when reconcilers start and stop
 */
public record ReplicaSpec(
    String identity,
    String namespace,
    String leaseName,
    Timings timings,
    KubernetesClient client,
    ServiceRecorder recorder) {}
