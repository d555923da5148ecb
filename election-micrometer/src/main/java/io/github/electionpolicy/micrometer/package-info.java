/**
 * Micrometer metrics of a running election: {@link io.github.electionpolicy.micrometer.ElectionMetrics}, a
 * {@link io.micrometer.core.instrument.binder.MeterBinder} for one
 * {@link io.github.electionpolicy.fabric8.ElectionRunner}, with client-go's
 * {@code leader_election_master_status} among its meters.
 *
 * <pre>{@code
 * ElectionMetrics metrics = new ElectionMetrics();
 * metrics.bindTo(registry);
 * ElectionRunner runner = metrics.start(ElectionRunner.builder()
 *     .client(client)
 *     .decision(decision)
 *     .settings(settings)
 *     .service(reconciler));
 * }</pre>
 *
 * <p>Micrometer ({@code io.micrometer:micrometer-core}) is an optional dependency of this module: the
 * application brings it, at its own version. docs/metrics.md lists the Prometheus names, labels and alert
 * examples.
 */
package io.github.electionpolicy.micrometer;
