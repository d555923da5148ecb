package io.github.electionpolicy.fabric8;

/**
 * Which contending replicas {@link ElectionHealth#ready()} calls ready: every replica in touch with the API
 * server ({@link #CONNECTED}, the default), or only the leader ({@link #LEADER_ONLY}), for a Service that
 * must route to the leader. A runner that runs unelected is ready once its services started, in both modes.
 *
 * <pre>{@code
 * ElectionRunner runner = ElectionRunner.builder()
 *     .client(client)
 *     .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
 *     .settings(LeaseSettings.builder().leaseName("orders-controller").build())
 *     .service(webhookServer)
 *     .readiness(Readiness.LEADER_ONLY)   // the Service sends requests to the leader only
 *     .start();
 * }</pre>
 *
 * <p>An enum; thread-safe.
 */
public enum Readiness {
  /**
   * Ready when a Lease call succeeded recently, whether this replica leads or follows (the default).
   * Followers are ready, so a rolling update proceeds.
   */
  CONNECTED,
  /**
   * Ready only while leading and in touch with the API server: followers, and a leader past its renew
   * deadline, are not ready. With {@code N} replicas, {@code N - 1} are never ready, so a Deployment's
   * rolling update and a PodDisruptionBudget count them as unavailable: allow that
   * ({@code maxUnavailable} of at least {@code N - 1}, or the {@code Recreate} strategy).
   */
  LEADER_ONLY
}
