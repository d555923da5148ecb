package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * One create or update of a Lease that the API server accepted, as the server stored it: what a {@link
 * LeaseApi} records on the server's side, so a test sees what was written, not what a client believes it
 * sent.
 *
 * <pre>{@code
 * List<String> holders = api.leaseWrites("orders-controller").stream().map(LeaseWrite::holder).toList();
 * assertThat(holders).containsSubsequence("replica-1", "", "replica-2"); // released, then taken over
 * }</pre>
 *
 * <p>On the embedded server, {@link #receivedNanos()} and {@link #answeredNanos()} are the {@link
 * System#nanoTime()} instants at which the server began and finished handling the write, so they compare with
 * instants a test takes itself. Against a real API server (see {@link ApiServerTarget}) the fixture learns of
 * writes from a watch, and both are the instant the watch delivered the event.
 *
 * <p>Immutable apart from {@link #spec()}, a fabric8 model object that callers must not modify; thread-safe.
 *
 * @param namespace the Lease's namespace
 * @param name the Lease's name
 * @param resourceVersion the version the server gave the stored object; API servers backed by etcd use
 *     increasing integers, and a version that is not one is recorded as {@code -1}
 * @param receivedNanos when the server began handling the write (the embedded server), or when the watch
 *     delivered it (a real server)
 * @param answeredNanos when the server had stored it, or when the watch delivered it
 * @param spec the stored spec; may be {@code null}
 * @param annotations the stored object's annotations (empty when it has none): a sharded runner's hand-over, for
 *     instance, is a write that names the next holder and carries {@code election-policy.io/hand-over-proof}
 */
public record LeaseWrite(String namespace, String name, long resourceVersion, long receivedNanos,
    long answeredNanos, LeaseSpec spec, Map<String, String> annotations) {

  /**
   * Checks the names and copies the annotations.
   *
   * @param namespace the Lease's namespace
   * @param name the Lease's name
   * @param resourceVersion the stored version
   * @param receivedNanos when handling began
   * @param answeredNanos when it ended
   * @param spec the stored spec
   * @param annotations the stored annotations
   */
  public LeaseWrite {
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    annotations = Map.copyOf(Objects.requireNonNull(annotations, "annotations"));
  }

  /**
   * A write of a Lease without annotations.
   *
   * @param namespace the Lease's namespace
   * @param name the Lease's name
   * @param resourceVersion the stored version
   * @param receivedNanos when handling began
   * @param answeredNanos when it ended
   * @param spec the stored spec
   */
  public LeaseWrite(String namespace, String name, long resourceVersion, long receivedNanos, long answeredNanos,
      LeaseSpec spec) {
    this(namespace, name, resourceVersion, receivedNanos, answeredNanos, spec, Map.of());
  }

  static LeaseWrite of(Lease stored, long receivedNanos, long answeredNanos) {
    Map<String, String> annotations = stored.getMetadata().getAnnotations();
    return new LeaseWrite(stored.getMetadata().getNamespace(), stored.getMetadata().getName(),
        version(stored.getMetadata().getResourceVersion()), receivedNanos, answeredNanos, stored.getSpec(),
        annotations == null ? Map.of() : annotations);
  }

  private static long version(String resourceVersion) {
    try {
      return resourceVersion == null ? -1 : Long.parseLong(resourceVersion);
    } catch (NumberFormatException opaque) {
      return -1;
    }
  }

  /**
   * The holder the write left in the Lease.
   *
   * @return the holder identity, trimmed; empty when there is none, which is how a holder releases the Lease
   */
  public String holder() {
    return spec == null || spec.getHolderIdentity() == null ? "" : spec.getHolderIdentity().trim();
  }

  /**
   * How often the Lease had changed hands, as the writer counted.
   *
   * @return {@code spec.leaseTransitions}, or 0 when unset
   */
  public int leaseTransitions() {
    return spec == null || spec.getLeaseTransitions() == null ? 0 : spec.getLeaseTransitions();
  }

  /**
   * The lease duration the write announced.
   *
   * @return {@code spec.leaseDurationSeconds}, or zero when unset
   */
  public Duration leaseDuration() {
    Integer seconds = spec == null ? null : spec.getLeaseDurationSeconds();
    return seconds == null ? Duration.ZERO : Duration.ofSeconds(seconds);
  }
}
