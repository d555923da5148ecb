package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.github.electionpolicy.ElectionDecision;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * docs/sharding.md's recipe for a plain fabric8 informer, compiled here and run by {@code ShardingDocTest}: the lines
 * between the markers are the page's block, unindented by two.
 */
final class OwnedObjectsExample {

  private OwnedObjectsExample() {}

  // sharded-informer:start
  /**
   * Reconciles the ConfigMaps of the shards this replica owns, each under its shard's term. The informer lists and
   * watches every ConfigMap on every replica, so a shard that moves here is reconciled at once from a warm cache.
   */
  static final class OwnedConfigMaps implements ShardService, ResourceEventHandler<ConfigMap> {
    private final Shards shards;
    private final BiConsumer<ConfigMap, LeadershipTerm> reconcile;
    private final Map<Integer, LeadershipTerm> terms = new ConcurrentHashMap<>();
    private final Object[] locks;
    private volatile SharedIndexInformer<ConfigMap> informer;

    OwnedConfigMaps(Shards shards, BiConsumer<ConfigMap, LeadershipTerm> reconcile) {
      this.shards = shards;
      this.reconcile = reconcile;
      this.locks = new Object[shards.count()];
      for (int i = 0; i < locks.length; i++) {
        locks[i] = new Object();
      }
    }

    void inform(KubernetesClient client) {
      informer = client.configMaps().inform(this);
    }

    @Override
    public void start(int shard, LeadershipTerm term) {
      terms.put(shard, term);
      // Moved here: reconcile what the cache already holds, without waiting for a list.
      for (ConfigMap configMap : informer.getStore().list()) {
        if (shards.shardOf(configMap) == shard) {
          onAdd(configMap);
        }
      }
    }

    @Override
    public void stop(int shard) {
      synchronized (locks[shard]) {
        // Returns once no reconcile of the shard runs: none starts after this, since its term is gone.
        terms.remove(shard);
      }
    }

    @Override
    public void onAdd(ConfigMap configMap) {
      int shard = shards.shardOf(configMap);
      synchronized (locks[shard]) {
        LeadershipTerm term = terms.get(shard);
        if (term != null && term.isValid()) {
          reconcile.accept(configMap, term); // fence its writes with the term
        }
      }
    }

    @Override
    public void onUpdate(ConfigMap before, ConfigMap configMap) {
      onAdd(configMap);
    }

    @Override
    public void onDelete(ConfigMap configMap, boolean finalStateUnknown) {
    }
  }

  static ShardedRunner start(KubernetesClient client, ElectionDecision decision, LeaseSettings settings,
      BiConsumer<ConfigMap, LeadershipTerm> reconcile) {
    Shards shards = Shards.of(16);
    OwnedConfigMaps owned = new OwnedConfigMaps(shards, reconcile);
    owned.inform(client); // warm before the first shard is owned
    return ShardedRunner.builder()
        .client(client)
        .decision(decision)
        .settings(settings)
        .shards(shards.count())
        .service(owned)
        .start();
  }
  // sharded-informer:end
}
