package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.testsupport.Await;
import io.github.electionpolicy.testsupport.MarkdownBlocks;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * docs/sharding.md's sharded-runner recipe: its Java block is {@link OwnedObjectsExample}'s, which compiles here; run
 * as two replicas over the real client against the mock API server in CRUD mode, every ConfigMap is reconciled, only
 * by the replica that owns its shard, under that shard's valid term and never by two replicas at once; when one
 * replica closes, the other reconciles the objects of the shards it took at once, from its warm cache.
 */
class ShardedRunnerDocTest {

  private static final String DOC = "docs/sharding.md";
  private static final String EXAMPLE =
      "election-fabric8/src/test/java/io/github/electionpolicy/fabric8/OwnedObjectsExample.java";

  @RegisterExtension
  final MockApi api = new MockApi();

  @Test
  void theDocShowsTheCompiledRecipe() {
    String example = MarkdownBlocks.between(MarkdownBlocks.text(EXAMPLE), "  // sharded-informer:start\n",
        "  // sharded-informer:end\n");
    String block = MarkdownBlocks.between(MarkdownBlocks.text(DOC), "<!-- sharded-informer:start -->\n```java\n",
        "```\n<!-- sharded-informer:end -->");
    assertThat(block).as("copy the lines between the markers of %s into %s, unindented by two", EXAMPLE, DOC)
        .isEqualTo(example.replaceAll("(?m)^  ", ""));
  }

  @Test
  void eachObjectIsReconciledByItsShardsOwnerOnlyAndMovesWithItsShard() {
    KubernetesClient client = api.client();
    Shards shards = Shards.of(16);
    for (int i = 0; i < 48; i++) {
      client.configMaps().resource(new ConfigMapBuilder().withNewMetadata().withName("orders-" + i)
          .withUid(UUID.randomUUID().toString()).endMetadata().build()).create();
    }
    Map<String, String> inProgress = new ConcurrentHashMap<>();
    Map<String, Set<String>> reconciledBy = new ConcurrentHashMap<>();
    List<String> violations = new CopyOnWriteArrayList<>();
    Map<String, ShardedRunner> replicas = new ConcurrentHashMap<>();
    for (String identity : List.of("pod-a", "pod-b")) {
      replicas.put(identity, OwnedObjectsExample.start(api.client(), MockApi.CONTEND,
          MockApi.fastSettings(identity).build(), (configMap, term) -> {
            String name = configMap.getMetadata().getName();
            String other = inProgress.putIfAbsent(name, identity);
            if (other != null) {
              violations.add(name + " reconciled by " + identity + " while " + other + " reconciles it");
            }
            if (!term.isValid() || !term.holderIdentity().equals(identity)) {
              violations.add(name + " reconciled by " + identity + " under " + term);
            }
            ShardedRunner self = replicas.get(identity);
            if (self != null && self.termFor(configMap).isEmpty() && term.isValid()) {
              violations.add(name + " reconciled by " + identity + ", which does not own shard "
                  + shards.shardOf(configMap));
            }
            reconciledBy.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(identity);
            inProgress.remove(name, identity);
          }));
    }
    try {
      Await.until("every ConfigMap reconciled once both replicas share the shards",
          () -> reconciledBy.size() == 48 && replicas.values().stream()
              .allMatch(r -> r.ownedShards().size() == 8), () -> new TreeMap<>(reconciledBy));
      ShardedRunner b = replicas.get("pod-b");
      Set<Integer> movedShards = new TreeSet<>(b.ownedShards().keySet());
      Set<String> moved = new TreeSet<>();
      client.configMaps().list().getItems().stream().filter(c -> movedShards.contains(shards.shardOf(c)))
          .map(ConfigMap::getMetadata).forEach(m -> moved.add(m.getName()));
      moved.forEach(name -> reconciledBy.get(name).remove("pod-a")); // by a before b had the shard: not the move
      b.close();
      Await.until("pod-a owns every shard and has reconciled the moved objects, with no new event",
          () -> replicas.get("pod-a").ownedShards().size() == 16
              && moved.stream().allMatch(name -> reconciledBy.get(name).contains("pod-a")),
          () -> new TreeMap<>(reconciledBy));
      assertThat(violations).isEmpty();
    } finally {
      replicas.values().forEach(ShardedRunner::close);
    }
  }
}
