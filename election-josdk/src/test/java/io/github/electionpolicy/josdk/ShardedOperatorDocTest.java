package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.github.electionpolicy.testsupport.MarkdownBlocks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * docs/sharding.md's JOSDK recipe is {@link ShardedWidgetsExample}'s, which compiles here; run as two replicas against
 * the embedded API server, every widget's ConfigMap is written by a replica, under a term of the widget's shard.
 */
class ShardedOperatorDocTest {

  private static final String DOC = "docs/sharding.md";
  private static final String EXAMPLE =
      "election-josdk/src/test/java/io/github/electionpolicy/josdk/ShardedWidgetsExample.java";

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  @Test
  void theDocShowsTheCompiledRecipe() {
    String example = MarkdownBlocks.between(MarkdownBlocks.text(EXAMPLE), "  // sharded-josdk:start\n",
        "  // sharded-josdk:end\n");
    String block = MarkdownBlocks.between(MarkdownBlocks.text(DOC), "<!-- sharded-josdk:start -->\n```java\n",
        "```\n<!-- sharded-josdk:end -->");
    assertThat(block).as("copy the lines between the markers of %s into %s, unindented by two", EXAMPLE, DOC)
        .isEqualTo(example.replaceAll("(?m)^  ", ""));
  }

  @Test
  void twoReplicasOfTheRecipeWriteEveryWidgetsConfigMap() throws Exception {
    ElectionDecision contend = ElectionPolicy.defaults().decide(Environment.of(Map.of()), OperatorReplicas.SUBSTRATE);
    Map<String, String> uids = new ShardedReplicas(api).createWidgets(24);
    List<AutoCloseable> replicas = new ArrayList<>();
    try {
      for (String identity : List.of("pod-a", "pod-b")) {
        // RECONTEND, not the default EXIT: a shard lost on a loaded machine must not end the test's JVM.
        replicas.add(ShardedWidgetsExample.start(api.replica(identity).client(), contend,
            OperatorReplicas.settings(identity).namespace(api.namespace()).lossPolicy(LossPolicy.recontend()).build()));
      }
      Await.until("every widget's ConfigMap written", () -> uids.keySet().stream().allMatch(name ->
          api.client().configMaps().inNamespace(api.namespace()).withName("widget-" + name).get() != null),
          Duration.ofSeconds(60));
      Set<String> writers = uids.keySet().stream()
          .map(name -> api.client().configMaps().inNamespace(api.namespace()).withName("widget-" + name).get())
          .filter(Objects::nonNull).map(ConfigMap::getData).map(data -> data.get("reconciledBy"))
          .collect(Collectors.toSet());
      assertThat(writers).isSubsetOf("pod-a", "pod-b");
    } finally {
      for (AutoCloseable replica : replicas) {
        replica.close();
      }
    }
  }
}
