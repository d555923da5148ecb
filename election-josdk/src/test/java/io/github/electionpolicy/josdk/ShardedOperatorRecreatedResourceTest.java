package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Utils;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.fabric8.TestTerms;
import io.github.electionpolicy.josdk.sample.Gadget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Shards go by {@code metadata.uid}, JOSDK by name: a gadget deleted and created again under the same name is another
 * object, of another shard. pod-a owns shard 0 and reconciles the first g-0 (held); the gadget is deleted and made
 * again, its uid now in shard 1, pod-b's, which reconciles it and writes its status. Then pod-a's reconciliation of
 * the first g-0 ends with a status patch: it must not land on the second g-0, whose shard pod-a does not own.
 */
class ShardedOperatorRecreatedResourceTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  static final Shards SHARDS = Shards.of(2);
  static final AtomicBoolean HOLD_A = new AtomicBoolean(true);
  static final CountDownLatch A_HELD = new CountDownLatch(1);
  static final CountDownLatch A_RELEASE = new CountDownLatch(1);
  static final CountDownLatch A_DONE = new CountDownLatch(1);
  /** gadget name -> the replica reconciling it now; and every overlap seen. */
  static final Map<String, String> IN_PROGRESS = new ConcurrentHashMap<>();
  static final List<String> OVERLAPS = new CopyOnWriteArrayList<>();

  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class Stamping implements Reconciler<Gadget> {
    private final String identity;

    Stamping(String identity) {
      this.identity = identity;
    }

    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) throws InterruptedException {
      String name = gadget.getMetadata().getName();
      String other = IN_PROGRESS.putIfAbsent(name, identity);
      if (other != null) {
        OVERLAPS.add(name + " reconciled by " + identity + " while " + other + " reconciles it");
      }
      try {
        if (identity.equals("pod-a") && HOLD_A.compareAndSet(true, false)) {
          A_HELD.countDown();
          A_RELEASE.await(60, TimeUnit.SECONDS);
        }
      } finally {
        IN_PROGRESS.remove(name, identity);
      }
      Gadget.Status status = new Gadget.Status();
      status.setReconciledBy(identity);
      gadget.setStatus(status);
      return UpdateControl.patchStatus(gadget);
    }
  }

  private static final AtomicLong MOCK_UIDS = mockUidCounter();

  private static AtomicLong mockUidCounter() {
    try {
      Field field = Utils.class.getDeclaredField("leastSigBits");
      field.setAccessible(true);
      return (AtomicLong) field.get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Creates g-0 with a uid of {@code shard} (the embedded server numbers uids with fabric8's counter). */
  private Gadget createInShard(int shard) {
    Random random = new Random();
    long next;
    do {
      next = random.nextLong();
    } while (SHARDS.shardOf(new UUID(0, next + 1).toString()) != shard);
    MOCK_UIDS.set(next);
    Gadget created = api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), "g-0")).create();
    assertThat(SHARDS.shardOf(created)).as("the shard of g-0's uid " + created.getMetadata().getUid()).isEqualTo(shard);
    return created;
  }

  private ShardedOperator operator(String identity, List<KubernetesClient> clients) {
    KubernetesClient client = api.replica(identity).client();
    KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build();
    clients.add(operatorClient);
    return ShardedOperator.builder()
        .client(operatorClient)
        .shards(2)
        .configuration(o -> o.withUseSSAToPatchPrimaryResource(false).withMetrics(new Metrics() {
          @Override
          public void reconciliationFinished(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
            if (identity.equals("pod-a") && A_RELEASE.getCount() == 0) {
              A_DONE.countDown(); // JOSDK runs one reconciliation of g-0 at a time: the held one's end
            }
          }
        }))
        .reconcilers((josdk, shards) -> josdk.register(new Stamping(identity)))
        .start();
  }

  @Test
  @Disabled("Finding (review r2, 4), not fixed: red. The fence checks a write against the shard of the reconciliation "
      + "that sends it, not of the object it lands on; JOSDK writes by name, and its status patch carries no "
      + "resourceVersion, so the last write of a reconciliation of a deleted object lands on the object created again "
      + "under its name, whose uid may be in a shard another replica owns. A fix needs a uid precondition on such "
      + "writes (the fence would have to add the reconciled object's uid to each body); docs/sharding.md states the "
      + "limit meanwhile.")
  void aReconciliationOfAnObjectGoneDoesNotWriteTheObjectMadeUnderItsNameInAShardOwnedElsewhere() throws Exception {
    List<KubernetesClient> clients = new CopyOnWriteArrayList<>();
    ShardedOperator a = operator("pod-a", clients);
    ShardedOperator b = operator("pod-b", clients);
    try {
      a.start(0, TestTerms.valid("pod-a"));
      b.start(1, TestTerms.valid("pod-b"));
      Gadget first = createInShard(0);
      assertThat(A_HELD.await(30, TimeUnit.SECONDS)).as("pod-a reconciles the first g-0").isTrue();

      api.client().resource(first).delete();
      Await.until("the first g-0 is gone", () -> api.client().resources(Gadget.class).inNamespace(api.namespace())
          .withName("g-0").get() == null, Duration.ofSeconds(30));
      Gadget second = createInShard(1);
      Await.until("pod-b wrote the second g-0's status", () -> {
        Gadget read = api.client().resources(Gadget.class).inNamespace(api.namespace()).withName("g-0").get();
        return read != null && read.getStatus() != null && "pod-b".equals(read.getStatus().getReconciledBy());
      }, Duration.ofSeconds(30));

      A_RELEASE.countDown();
      // pod-a's reconciliation of the first g-0 ends: JOSDK patches its status, or is refused.
      assertThat(A_DONE.await(30, TimeUnit.SECONDS)).as("pod-a's reconciliation of the first g-0 ended").isTrue();

      Gadget now = api.client().resources(Gadget.class).inNamespace(api.namespace()).withName("g-0").get();
      assertThat(now.getMetadata().getUid()).isEqualTo(second.getMetadata().getUid());
      assertThat(now.getStatus().getReconciledBy())
          .as("who wrote the status of the second g-0 (uid in shard 1, pod-b's) last; overlaps by name: %s", OVERLAPS)
          .isEqualTo("pod-b");
    } finally {
      A_RELEASE.countDown();
      a.close();
      b.close();
      clients.forEach(KubernetesClient::close);
    }
  }
}
