package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.github.electionpolicy.fabric8.Shards;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.Cache;
import java.util.Set;

/**
 * A JOSDK event source, one per controller of a {@link ShardedOperator}, that fires an event for each primary
 * resource of a shard when the shard moves to this replica: the resources are read from the controller's own cache
 * (its primary informer, warm since the operator started), so they are reconciled at once, with no list and no new
 * change. It holds no resources of its own (its type is {@code Void}, which no reconciler looks up). Thread-safe.
 *
 * @param <P> the controller's primary resource
 */
final class ShardMoves<P extends HasMetadata> extends AbstractEventSource<Void, P> {

  /** The name each controller's shard-moves source is registered under. */
  static final String NAME = "election-policy-shard-moves";

  private final Shards shards;
  private final Cache<P> primaries;

  ShardMoves(Shards shards, Cache<P> primaries) {
    super(Void.class, NAME);
    this.shards = shards;
    this.primaries = primaries;
  }

  /**
   * Fires an event for every cached primary resource of {@code shard}.
   *
   * @return how many events were fired
   */
  int moved(int shard) {
    if (!isRunning()) {
      return 0;
    }
    int[] fired = {0};
    primaries.list(resource -> hasShard(resource, shard)).forEach(resource -> {
      getEventHandler().handleEvent(new Event(ResourceID.fromResource(resource)));
      fired[0]++;
    });
    return fired[0];
  }

  private boolean hasShard(P resource, int shard) {
    String uid = resource.getMetadata() == null ? null : resource.getMetadata().getUid();
    return uid != null && !uid.isEmpty() && shards.shardOf(uid) == shard;
  }

  @Override
  public Set<Void> getSecondaryResources(P primary) {
    return Set.of();
  }
}
