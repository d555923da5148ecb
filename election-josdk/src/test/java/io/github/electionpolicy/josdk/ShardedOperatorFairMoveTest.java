package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.fabric8.ShardService;
import io.github.electionpolicy.fabric8.ShardedRunner;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.josdk.sample.Widget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 17's warm move with a one-thread reconciliation pool: two shards move to the replica one just after the other,
 * each with about thirty cached widgets, while the pool's one thread is held; the second shard's first reconciliation
 * then comes after at most a few of the first shard's, not after all of them (JOSDK's pool alone runs its tasks first
 * in, first out).
 */
class ShardedOperatorFairMoveTest {

  private static final int WIDGETS = 60;
  private static final int SHARDS = 2;

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  @Test
  void aShardMovedJustAfterAnotherIsReconciledBeforeTheOthersBulk() {
    try (ShardedReplicas cluster = new ShardedReplicas(api)) {
      Map<String, String> uids = cluster.createWidgets(WIDGETS);
      Shards shards = Shards.of(SHARDS);
      for (int shard = 0; shard < SHARDS; shard++) {
        int s = shard;
        assertThat(uids.values().stream().filter(uid -> shards.shardOf(uid) == s).count())
            .as("widgets of shard %d", s).isGreaterThanOrEqualTo(15);
      }
      List<String> reconciled = new CopyOnWriteArrayList<>();
      CountDownLatch release = new CountDownLatch(1);
      AtomicInteger finished = new AtomicInteger();
      Metrics counting = new Metrics() {
        @Override
        public void reconciliationFinished(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
          finished.incrementAndGet();
        }
      };
      KubernetesClient leases = api.replica("pod-a").client();
      try (KubernetesClient client = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
          leases.getConfiguration()).withHttp2Disable(true).build()).build()) {
        ShardedOperator operator = ShardedOperator.builder()
            .client(client)
            .shards(SHARDS)
            .configuration(o -> o.withConcurrentReconciliationThreads(1).withMetrics(counting))
            .reconcilers((josdk, sharded) -> josdk.register(new Recording(reconciled, release)))
            .start();
        ShardedRunner runner = null;
        try {
          // The start's reconciliations, none of an owned shard, are done before any shard moves here.
          Await.until("the start's reconciliations ended", () -> finished.get() >= WIDGETS, Duration.ofSeconds(60),
              finished::get);
          List<Integer> started = new CopyOnWriteArrayList<>();
          runner = ShardedRunner.builder()
              .client(leases)
              .decide(ElectionPolicy.defaults(), Environment.of(Map.of()), OperatorReplicas.SUBSTRATE)
              // RECONTEND, not the default EXIT: a shard lost on a loaded machine must not end the test's JVM.
              .settings(OperatorReplicas.settings("pod-a").namespace(api.namespace())
                  .lossPolicy(LossPolicy.recontend()).build())
              .shards(SHARDS)
              .service(new ShardService() {
                @Override
                public void start(int shard, LeadershipTerm term) {
                  operator.start(shard, term);
                  started.add(shard);
                }

                @Override
                public void stop(int shard) {
                  operator.stop(shard);
                }
              })
              .start();
          // The pool's one thread is held in the first reconciliation (of the first shard) until both moved here.
          Await.until("both shards moved here", () -> started.size() == SHARDS, Duration.ofSeconds(30),
              () -> started);
          release.countDown();
          Await.until("every widget reconciled", () -> reconciled.size() >= WIDGETS, Duration.ofSeconds(60),
              reconciled::size);

          assertThat(reconciled).doesNotHaveDuplicates();
          int first = started.get(0);
          int second = started.get(1);
          int before = 0;
          for (String name : reconciled) {
            if (shards.shardOf(uids.get(name)) == second) {
              break;
            }
            before++;
          }
          long ofFirst = uids.values().stream().filter(uid -> shards.shardOf(uid) == first).count();
          assertThat(before).as("reconciliations of shard %d (of %d) before shard %d's first: %s", first, ofFirst,
              second, reconciled).isLessThanOrEqualTo(3);
        } finally {
          release.countDown();
          if (runner != null) {
            runner.close();
          }
          operator.close();
        }
      }
    }
  }

  /** Records each reconciliation, and holds the first one until the test releases it. */
  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class Recording implements Reconciler<Widget> {
    private final List<String> reconciled;
    private final CountDownLatch release;

    Recording(List<String> reconciled, CountDownLatch release) {
      this.reconciled = reconciled;
      this.release = release;
    }

    @Override
    public UpdateControl<Widget> reconcile(Widget widget, Context<Widget> context) throws InterruptedException {
      reconciled.add(widget.getMetadata().getName());
      release.await(60, TimeUnit.SECONDS);
      return UpdateControl.noUpdate();
    }
  }
}
