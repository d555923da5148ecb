package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.github.electionpolicy.fabric8.TermEndedException;
import io.github.electionpolicy.fabric8.WriteGate;
import java.util.Objects;

/**
 * The write check of a {@link ShardedOperator}'s client, the one JOSDK and the reconcilers ({@code
 * context.getClient()}) write with: a write sent from inside a reconciliation goes only while the shard of the
 * resource being reconciled is still owned here under the term the reconciliation began with, and that term is valid.
 * So what JOSDK writes on a reconciliation's behalf (an {@code UpdateControl}'s patch of the resource or its status, a
 * finalizer added or removed) and what the reconciler writes through the operator's client are refused once the shard
 * moved away or its term ended, and are never sent by a replica that does not own the shard (JOSDK adds a missing
 * finalizer before it calls the reconciler, on every replica whose cache has the resource).
 *
 * <p>Which reconciliation a write belongs to is the one {@link ShardGate} entered on the sending thread: JOSDK's
 * reconciliation thread, or a workflow thread that runs a managed dependent of it ({@link ShardContextExecutor}
 * carries the reconciliation over). The client is a {@link WriteGate#gate(io.fabric8.kubernetes.client.KubernetesClient,
 * WriteGate.Check)}, which makes no automatic retries, so every write is sent, and checked, on the thread that made
 * the call. A write outside any reconciliation (none is JOSDK's own: its leader election stays off) passes, as do all
 * reads, informers' lists and watches included.
 *
 * <p>The shard is the reconciled resource's, by its uid, while JOSDK writes by name: a write that outlives the object
 * (deleted and made again under its name, with another uid, maybe of a shard another replica owns) would land on the
 * new one. So a write of the reconciled resource itself (its path, its status or scale, a pod's eviction, ...) is sent
 * on the condition that the object has the uid the reconciliation began with, which the API server checks ({@link
 * #bodyToSend}, {@link UidPrecondition}); writes of other objects go as they are.
 *
 * <p>Thread-safe: reads the calling thread's reconciliation and the shard's state under its monitor.
 */
final class ShardFence implements WriteGate.Check {

  private final ShardGate gate;
  private final ShardOwnership ownership;

  ShardFence(ShardGate gate, ShardOwnership ownership) {
    this.gate = Objects.requireNonNull(gate, "gate");
    this.ownership = Objects.requireNonNull(ownership, "ownership");
  }

  @Override
  public void beforeWrite(String method, String path) {
    ShardOwnership.Entry entry = gate.current();
    if (entry == null) {
      return;
    }
    if (!entry.owned()) {
      throw new KubernetesClientException("refused " + method + " " + path + ": it was made in a reconciliation of "
          + (entry.shard() < 0 ? "a resource without a uid, which is in no shard" : "a resource of shard "
              + entry.shard() + ", which this replica does not own")
          + "; the request was not sent (the shard's owner writes it); fix: nothing, this is the sharded operator's "
          + "fence");
    }
    if (!entry.term().isValid() || !ownership.holds(entry)) {
      throw new TermEndedException(method, path, entry.term());
    }
  }

  /**
   * A write of the resource being reconciled (its path, or a subresource that writes it) goes on the condition that the
   * object under its name still has the uid the reconciliation began with ({@link UidPrecondition}); any other goes as
   * it is.
   */
  @Override
  public String bodyToSend(String method, String path, String contentType, String body) {
    ShardOwnership.Entry entry = gate.current();
    if (entry == null || entry.primary() == null || !entry.primary().isPathOf(path)) {
      return body;
    }
    return entry.primary().withUid(method, path, contentType, body);
  }
}
