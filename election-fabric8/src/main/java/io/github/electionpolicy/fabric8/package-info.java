/**
 * Acts on the core's election decision with fabric8: runs the reconcilers at once when the process runs
 * unelected, or contends for a {@code coordination.k8s.io/v1} Lease and runs them only while it leads.
 *
 * <p>Start with {@link io.github.electionpolicy.fabric8.ElectedReconcilers}; configure it with
 * {@link io.github.electionpolicy.fabric8.LeaseSettings}; give it
 * {@link io.github.electionpolicy.fabric8.Reconciler}s, which receive a
 * {@link io.github.electionpolicy.fabric8.LeadershipTerm}. What happens on a loss is a
 * {@link io.github.electionpolicy.fabric8.LossPolicy}; health and state are
 * {@link io.github.electionpolicy.fabric8.ElectionHealth} and
 * {@link io.github.electionpolicy.fabric8.ElectionState}.
 *
 * <pre>{@code
 * try (ElectedReconcilers runner = ElectedReconcilers.builder()
 *     .client(client)
 *     .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.of("kubernetes", true))
 *     .settings(LeaseSettings.builder().leaseName("orders-controller").build())
 *     .reconciler(ordersReconciler)
 *     .start()) {
 *   runner.awaitStopped();
 * }
 * }</pre>
 */
package io.github.electionpolicy.fabric8;
