package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.github.electionpolicy.testsupport.Await;
import io.github.electionpolicy.testsupport.MarkdownBlocks;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * docs/sharding.md: its Java block is {@link ShardedInformerExample}'s, which compiles here, and which reconciles
 * exactly the objects of the owned shards when run with the real client against the mock API server in CRUD mode;
 * the selector it shows is what {@link Shards} writes.
 */
class ShardsDocTest {

  private static final String DOC = "docs/sharding.md";
  private static final String EXAMPLE =
      "election-fabric8/src/test/java/io/github/electionpolicy/fabric8/ShardedInformerExample.java";

  @Test
  void theDocShowsTheCompiledExample() {
    String example = MarkdownBlocks.between(MarkdownBlocks.text(EXAMPLE), "  // sharding-example:start\n",
        "  // sharding-example:end\n");
    String block = MarkdownBlocks.between(MarkdownBlocks.text(DOC), "<!-- sharding-example:start -->\n```java\n",
        "```\n<!-- sharding-example:end -->");
    assertThat(block).as("copy the lines between the markers of %s into %s, unindented by two", EXAMPLE, DOC)
        .isEqualTo(example.replaceAll("(?m)^  ", ""));
  }

  @Test
  void theDocShowsTheSelectorShardsWrites() {
    assertThat(MarkdownBlocks.text(DOC))
        .contains("Shards.of(16).range(3).selector(Shards.UID_FIELD)")
        .contains(Shards.of(16).range(3).selector(Shards.UID_FIELD));
  }

  /**
   * Two replicas with complementary shards reconcile every object once between them. (Which objects fall in which
   * shard is left to the server: fabric8's mock server numbers uids in sequence, and FNV-1a's top bits hardly depend
   * on a key's last characters, so its objects fall in one or two shards; real uids are random.)
   */
  @Test
  void twoReplicasWithComplementaryShardsReconcileEveryObjectOnce() throws Exception {
    Shards shards = Shards.of(4);
    try (MockApi api = new MockApi()) {
      KubernetesClient client = api.client();
      List<ConfigMap> created = new ArrayList<>();
      for (int i = 0; i < 24; i++) {
        created.add(client.configMaps().resource(new ConfigMapBuilder().withNewMetadata()
            .withName("orders-" + i).endMetadata().build()).create());
      }
      Set<Integer> ownedByA = Set.of(shards.shardOf(created.get(0)));
      Set<Integer> ownedByB = new TreeSet<>(List.of(0, 1, 2, 3));
      ownedByB.removeAll(ownedByA);
      Set<String> expectedA = new TreeSet<>();
      Set<String> expectedB = new TreeSet<>();
      created.forEach(configMap -> (ownedByA.contains(shards.shardOf(configMap)) ? expectedA : expectedB)
          .add(configMap.getMetadata().getName()));
      Set<String> reconciledA = ConcurrentHashMap.newKeySet();
      Set<String> reconciledB = ConcurrentHashMap.newKeySet();
      SharedIndexInformer<ConfigMap> a = ShardedInformerExample.informOwned(client, shards, ownedByA,
          configMap -> reconciledA.add(configMap.getMetadata().getName()));
      SharedIndexInformer<ConfigMap> b = ShardedInformerExample.informOwned(client, shards, ownedByB,
          configMap -> reconciledB.add(configMap.getMetadata().getName()));
      try {
        Await.until("both informers have listed every ConfigMap",
            () -> a.getStore().list().size() == 24 && b.getStore().list().size() == 24);
        Await.until("each replica has reconciled its objects",
            () -> reconciledA.containsAll(expectedA) && reconciledB.containsAll(expectedB));
        assertThat(new TreeSet<>(reconciledA)).isEqualTo(expectedA);
        assertThat(new TreeSet<>(reconciledB)).isEqualTo(expectedB);
        assertThat(Collections.disjoint(reconciledA, reconciledB)).as("no object reconciled by both").isTrue();
        assertThat(reconciledA.size() + reconciledB.size()).isEqualTo(24);
      } finally {
        a.close();
        b.close();
      }
    }
  }
}
