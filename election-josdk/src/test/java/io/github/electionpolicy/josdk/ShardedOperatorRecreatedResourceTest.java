package io.github.electionpolicy.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
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
  // Static, as the reconciler reads them; each test begins with fresh ones.
  static final AtomicBoolean HOLD_A = new AtomicBoolean(true);
  static volatile CountDownLatch A_HELD;
  static volatile CountDownLatch A_RELEASE;
  static volatile CountDownLatch A_DONE;
  /** gadget name -> the replica reconciling it now; and every overlap seen. */
  static final Map<String, String> IN_PROGRESS = new ConcurrentHashMap<>();
  static final List<String> OVERLAPS = new CopyOnWriteArrayList<>();

  @BeforeEach
  void freshLatches() {
    HOLD_A.set(true);
    A_HELD = new CountDownLatch(1);
    A_RELEASE = new CountDownLatch(1);
    A_DONE = new CountDownLatch(1);
    IN_PROGRESS.clear();
    OVERLAPS.clear();
  }

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

  /**
   * Creates g-0 with a uid of {@code shard}: the embedded server numbers uids with fabric8's counter, set here; a real
   * one's are random, so g-0 is made again until its uid falls in the shard.
   */
  private Gadget createInShard(int shard) {
    if (!api.isEmbedded()) {
      while (true) {
        Gadget created = api.client().resources(Gadget.class).inNamespace(api.namespace())
            .resource(Gadget.named(api.namespace(), "g-0")).create();
        if (SHARDS.shardOf(created) == shard) {
          return created;
        }
        api.client().resource(created).delete();
        awaitGone();
      }
    }
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

  private void awaitGone() {
    Await.until("g-0 is gone", () -> api.client().resources(Gadget.class).inNamespace(api.namespace())
        .withName("g-0").get() == null, Duration.ofSeconds(30));
  }

  /** On a real server ({@code -Delection.it.kubeconfig}): the Gadget CRD, with its status subresource. */
  private void gadgetDefinition() {
    CustomResourceDefinition crd = new CustomResourceDefinitionBuilder()
        .withNewMetadata().withName("gadgets.example.electionpolicy.io").endMetadata()
        .withNewSpec().withGroup("example.electionpolicy.io").withScope("Namespaced")
        .withNewNames().withKind("Gadget").withPlural("gadgets").withSingular("gadget").endNames()
        .addNewVersion().withName("v1").withServed(true).withStorage(true)
        .withNewSubresources().withNewStatus().endStatus().endSubresources()
        .withNewSchema().withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
        .endOpenAPIV3Schema().endSchema().endVersion()
        .endSpec().build();
    api.client().apiextensions().v1().customResourceDefinitions().resource(crd)
        .createOr(NonDeletingOperation::update);
    api.client().apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName())
        .waitUntilCondition(c -> c != null && c.getStatus() != null && c.getStatus().getConditions().stream()
            .anyMatch(k -> "Established".equals(k.getType()) && "True".equals(k.getStatus())), 1, TimeUnit.MINUTES);
  }

  private ShardedOperator operator(String identity, boolean ssa, List<KubernetesClient> clients) {
    KubernetesClient client = api.replica(identity).client();
    KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build();
    clients.add(operatorClient);
    return ShardedOperator.builder()
        .client(operatorClient)
        .shards(2)
        .configuration(o -> o.withUseSSAToPatchPrimaryResource(ssa).withMetrics(new Metrics() {
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

  /**
   * JOSDK's status patch: with {@code useSSAToPatchPrimaryResource(false)} a JSON Patch of the status without a
   * resourceVersion, which the fence begins with a {@code test} of the uid; with JOSDK's default ({@code true}) a
   * server-side apply of the status with the resource the reconciler returned, whose uid the fence sets.
   */
  @ParameterizedTest(name = "useSSAToPatchPrimaryResource={0}")
  @ValueSource(booleans = {false, true})
  void aReconciliationOfAnObjectGoneDoesNotWriteTheObjectMadeUnderItsNameInAShardOwnedElsewhere(boolean ssa)
      throws Exception {
    assumeTrue(!ssa || !api.isEmbedded(), "the embedded server answers a server-side apply with 415 Unsupported "
        + "Media Type: run with -Delection.it.kubeconfig=PATH for a real one");
    if (!api.isEmbedded()) {
      gadgetDefinition();
    }
    List<KubernetesClient> clients = new CopyOnWriteArrayList<>();
    ShardedOperator a = operator("pod-a", ssa, clients);
    ShardedOperator b = operator("pod-b", ssa, clients);
    try {
      a.start(0, TestTerms.valid("pod-a"));
      b.start(1, TestTerms.valid("pod-b"));
      Gadget first = createInShard(0);
      assertThat(A_HELD.await(30, TimeUnit.SECONDS)).as("pod-a reconciles the first g-0").isTrue();

      api.client().resource(first).delete();
      awaitGone();
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
