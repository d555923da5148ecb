/**
 * Acts on the core's election decision with fabric8: runs the reconcilers at once when the process runs
 * unelected, or contends for a {@code coordination.k8s.io/v1} Lease and runs them only while it leads.
 *
 * <p>Start with {@link io.github.electionpolicy.fabric8.ElectionRunner}; configure it with
 * {@link io.github.electionpolicy.fabric8.LeaseSettings}; give it
 * {@link io.github.electionpolicy.fabric8.LeaderService}s, which receive a
 * {@link io.github.electionpolicy.fabric8.LeadershipTerm}. What happens on a loss is a
 * {@link io.github.electionpolicy.fabric8.LossPolicy}; health and state are
 * {@link io.github.electionpolicy.fabric8.ElectionHealth} (with a
 * {@link io.github.electionpolicy.fabric8.Readiness} mode) and
 * {@link io.github.electionpolicy.fabric8.ElectionState}. {@link io.github.electionpolicy.fabric8.Shards} maps an
 * object to one of a fixed number of shards, as the API server's sharded list and watch does.
 *
 * <pre>{@code
 * try (ElectionRunner runner = ElectionRunner.builder()
 *     .client(client)
 *     .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
 *     .settings(LeaseSettings.builder().leaseName("orders-controller").build())
 *     .service(ordersReconciler)
 *     .start()) {
 *   runner.awaitStopped();
 * }
 * }</pre>
 */
package io.github.electionpolicy.fabric8;
