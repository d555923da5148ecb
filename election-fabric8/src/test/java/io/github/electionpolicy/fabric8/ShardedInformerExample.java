package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.Set;
import java.util.function.Consumer;

/** docs/sharding.md's client-side filter, compiled here and run by {@link ShardsDocTest}. */
final class ShardedInformerExample {

  private ShardedInformerExample() {}

  // sharding-example:start
  /** Reconciles only the ConfigMaps whose uid falls in one of the shards this replica owns. */
  static SharedIndexInformer<ConfigMap> informOwned(KubernetesClient client, Shards shards, Set<Integer> owned,
      Consumer<ConfigMap> reconcile) {
    return client.configMaps().inform(new ResourceEventHandler<>() {
      @Override
      public void onAdd(ConfigMap configMap) {
        if (owned.contains(shards.shardOf(configMap))) {
          reconcile.accept(configMap);
        }
      }

      @Override
      public void onUpdate(ConfigMap before, ConfigMap configMap) {
        onAdd(configMap);
      }

      @Override
      public void onDelete(ConfigMap configMap, boolean finalStateUnknown) {
      }
    });
  }
  // sharding-example:end
}
