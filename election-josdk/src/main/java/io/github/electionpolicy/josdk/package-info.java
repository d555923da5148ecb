/**
 * A Java Operator SDK operator, run only while this replica leads, through election-fabric8's
 * {@link io.github.electionpolicy.fabric8.ElectionRunner} instead of JOSDK's own leader election. The entry point
 * is {@link io.github.electionpolicy.josdk.OperatorService}, a
 * {@link io.github.electionpolicy.fabric8.LeaderService} that builds, starts and stops one
 * {@link io.javaoperatorsdk.operator.Operator} per term; {@link io.github.electionpolicy.josdk.ReconcilerRegistration}
 * registers a term's reconcilers with it.
 *
 * <p>For a sharded controller, {@link io.github.electionpolicy.josdk.ShardedOperator} is the warm mode: one
 * {@code Operator} on every replica for the whole process, the
 * {@link io.github.electionpolicy.fabric8.ShardService} of a {@link io.github.electionpolicy.fabric8.ShardedRunner},
 * reconciling only the resources of the shards this replica owns, each under its shard's term;
 * {@link io.github.electionpolicy.josdk.ShardedRegistration} registers its reconcilers.
 *
 * <pre>{@code
 * OperatorService widgets = OperatorService.builder()
 *     .client(client)
 *     .reconcilers((operator, term) -> operator.register(new WidgetReconciler(term)))
 *     .build();
 * ElectionRunner runner = ElectionRunner.builder()
 *     .client(client)
 *     .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
 *     .settings(LeaseSettings.builder().leaseName("widget-operator").build())
 *     .service(widgets)
 *     .start();
 * }</pre>
 */
package io.github.electionpolicy.josdk;
