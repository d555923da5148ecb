package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.fabric8.ShardedRunner;
import io.github.electionpolicy.josdk.sample.Gadget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.Cleaner;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.DeleteControl;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.Workflow;
import io.javaoperatorsdk.operator.api.reconciler.dependent.Dependent;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.CRUDKubernetesDependentResource;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Replicas of a sharded gadget operator whose reconciler writes twice per reconciliation, as real ones do: a ConfigMap
 * {@code gadget-<name>} through the operator's client ({@code context.getClient()}), and the gadget's status through
 * JOSDK ({@code UpdateControl.patchStatus}); both carry the replica's identity. It records what each replica's writes
 * were refused with and which reconciliations failed, and reads from the embedded server every write it received.
 */
final class ShardFenceReplicas implements AutoCloseable {

  static final int SHARDS = 16;

  final LeaseApiExtension api;
  /** identity -> what its reconciler's own writes were refused with. */
  final Map<String, List<Exception>> refusedClientWrites = new ConcurrentHashMap<>();
  /** identity -> what its failed reconciliations failed with (JOSDK's status patch included). */
  final Map<String, List<Exception>> failedReconciliations = new ConcurrentHashMap<>();
  /** identity -> the gadgets whose reconciliations JOSDK finished there (skipped ones included), in order. */
  final Map<String, List<String>> finished = new ConcurrentHashMap<>();
  /** gadget name -> identities that ran its reconciler, in order. */
  final Map<String, List<String>> reconciledBy = new ConcurrentHashMap<>();
  /** Called in each reconciliation before it writes; a test may hold a reconciliation here. */
  volatile ShardedReplicas.Hook hook = (identity, gadget) -> { };
  private final List<ShardedReplicas.Replica> replicas = new CopyOnWriteArrayList<>();
  private final List<KubernetesClient> clients = new CopyOnWriteArrayList<>();
  private final List<RecordedRequest> seen = new ArrayList<>();

  ShardFenceReplicas(LeaseApiExtension api) {
    this.api = api;
  }

  Gadget create(String name) {
    return api.client().resources(Gadget.class).inNamespace(api.namespace())
        .resource(Gadget.named(api.namespace(), name)).create();
  }

  Gadget gadget(String name) {
    return api.client().resources(Gadget.class).inNamespace(api.namespace()).withName(name).get();
  }

  ConfigMap marker(String name) {
    return api.client().configMaps().inNamespace(api.namespace()).withName("gadget-" + name).get();
  }

  /** The reconciler a replica runs. */
  enum Kind {
    /** {@link GadgetReconciler}: no finalizer. */
    PLAIN,
    /** {@link CleanedGadgetReconciler}: JOSDK adds a finalizer. */
    CLEANER,
    /** {@link DependentGadgetReconciler}: a managed dependent, reconciled on JOSDK's workflow threads. */
    DEPENDENT
  }

  /** The fixture of the test that runs now, for the dependents JOSDK instantiates. */
  static volatile ShardFenceReplicas running;

  /** Starts a replica with a reconciler of {@code kind}. */
  ShardedReplicas.Replica start(String identity, Kind kind) {
    running = this;
    // HTTP/1.1, as ShardedReplicas' replicas: the JDK client's HTTP/2 upgrade against the mock server is unreliable.
    KubernetesClient client = api.replica(identity).client();
    KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build();
    clients.add(operatorClient);
    Metrics failures = new Metrics() {
      @Override
      public void reconciliationFailed(HasMetadata resource, RetryInfo retryInfo, Exception exception,
          Map<String, Object> metadata) {
        failedReconciliations.computeIfAbsent(identity, i -> new CopyOnWriteArrayList<>()).add(exception);
      }

      @Override
      public void reconciliationFinished(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
        finished.computeIfAbsent(identity, i -> new CopyOnWriteArrayList<>()).add(resource.getMetadata().getName());
      }
    };
    ShardedOperator operator = ShardedOperator.builder()
        .client(operatorClient)
        .shards(SHARDS)
        // JSON patches, not server-side apply, which fabric8's mock server does not take (415).
        .configuration(o -> o.withMetrics(failures).withUseSSAToPatchPrimaryResource(false)
            .withSSABasedCreateUpdateMatchForDependentResources(false))
        .reconcilers((josdk, shards) -> josdk.register(switch (kind) {
          case PLAIN -> new GadgetReconciler(identity);
          case CLEANER -> new CleanedGadgetReconciler(identity);
          case DEPENDENT -> new DependentGadgetReconciler();
        }))
        .start();
    ShardedRunner runner = ShardedRunner.builder()
        .client(client)
        .decide(ElectionPolicy.defaults(), Environment.of(Map.of()), OperatorReplicas.SUBSTRATE)
        .settings(OperatorReplicas.settings(identity).namespace(api.namespace())
            // Roomier than OperatorReplicas' on a loaded machine: 3 s per request, and a stop timeout of 2 s.
            .leaseDuration(Duration.ofSeconds(8)).renewDeadline(Duration.ofSeconds(6)).retryPeriod(Duration.ofMillis(500))
            // RECONTEND: under EXIT a shard lost on a loaded machine stops the replica (its exiter returns here).
            .lossPolicy(LossPolicy.recontend()).build())
        .shards(SHARDS)
        .service(operator)
        .start();
    ShardedReplicas.Replica replica = new ShardedReplicas.Replica(identity, operator, runner);
    replicas.add(replica);
    return replica;
  }

  /**
   * The writes (every method but {@code GET}) the server received so far from {@code identity}'s clients to {@code
   * gadget} or its ConfigMaps, as {@code METHOD path}; every ConfigMap create counts (see {@link #createsMarkerOf}).
   */
  synchronized List<String> writes(String identity, String gadget) {
    RecordedRequest request;
    try {
      while ((request = api.mockServer().takeRequest(0, TimeUnit.MILLISECONDS)) != null) {
        seen.add(request);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    List<String> writes = new ArrayList<>();
    for (RecordedRequest r : seen) {
      String path = r.getPath();
      if (!"GET".equals(r.getMethod()) && (LeaseApi.USER_AGENT_PREFIX + identity).equals(r.getHeader("User-Agent"))
          && (path.contains("/gadgets/" + gadget) || path.contains("/configmaps/gadget-" + gadget)
              || path.contains("/configmaps/dependent-" + gadget) || createsMarkerOf(r, gadget))) {
        writes.add(r.getMethod() + " " + path);
      }
    }
    return writes;
  }

  /**
   * A create of a ConfigMap: a POST to the collection. The mock server has read its body by then, so the name is not
   * known: in a test with one gadget, it is one of that gadget's.
   */
  private static boolean createsMarkerOf(RecordedRequest request, String gadget) {
    return "POST".equals(request.getMethod()) && request.getPath().split("\\?")[0].endsWith("/configmaps");
  }

  @Override
  public void close() {
    replicas.forEach(ShardedReplicas.Replica::close);
    clients.forEach(KubernetesClient::close);
  }

  /** Writes the gadget's ConfigMap through the operator's client, then its status through JOSDK. */
  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  class GadgetReconciler implements Reconciler<Gadget> {
    final String identity;

    GadgetReconciler(String identity) {
      this.identity = identity;
    }

    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) throws InterruptedException {
      String name = gadget.getMetadata().getName();
      reconciledBy.computeIfAbsent(name, n -> new CopyOnWriteArrayList<>()).add(identity);
      hook.reconciling(identity, name);
      ConfigMap marker = new ConfigMapBuilder()
          .withNewMetadata()
              .withNamespace(gadget.getMetadata().getNamespace())
              .withName("gadget-" + name)
          .endMetadata()
          .addToData("reconciledBy", identity)
          .addToData("color", gadget.getSpec().getColor())
          .build();
      try {
        context.getClient().configMaps().resource(marker).createOr(NonDeletingOperation::update);
      } catch (RuntimeException refused) {
        // Recorded, and the reconciliation goes on to JOSDK's status patch, so that both writes are tried.
        refusedClientWrites.computeIfAbsent(identity, i -> new CopyOnWriteArrayList<>()).add(refused);
      }
      Gadget.Status status = new Gadget.Status();
      status.setReconciledBy(identity);
      gadget.setStatus(status);
      return UpdateControl.patchStatus(gadget);
    }
  }

  /** The same, with a cleaner: JOSDK adds its finalizer to each gadget before the first reconciliation. */
  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  final class CleanedGadgetReconciler extends GadgetReconciler implements Cleaner<Gadget> {
    CleanedGadgetReconciler(String identity) {
      super(identity);
    }

    @Override
    public DeleteControl cleanup(Gadget gadget, Context<Gadget> context) {
      return DeleteControl.defaultDelete();
    }
  }

  /**
   * Writes nothing itself: its managed dependent, {@link Marker}, creates or updates a ConfigMap {@code
   * dependent-<name>} on one of JOSDK's workflow threads.
   */
  @Workflow(dependents = @Dependent(type = Marker.class))
  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  static final class DependentGadgetReconciler implements Reconciler<Gadget> {
    @Override
    public UpdateControl<Gadget> reconcile(Gadget gadget, Context<Gadget> context) {
      return UpdateControl.noUpdate();
    }
  }

  /**
   * A gadget's ConfigMap {@code dependent-<name>}, holding the identity of the replica that reconciled it (read from
   * its client's {@code User-Agent}, which the fixture gives each replica); the test's hook runs in {@code desired},
   * on the workflow thread, so a test may hold it there.
   */
  public static final class Marker extends CRUDKubernetesDependentResource<ConfigMap, Gadget> {
    public Marker() {
      super(ConfigMap.class);
    }

    @Override
    protected ConfigMap desired(Gadget gadget, Context<Gadget> context) {
      String identity = context.getClient().getConfiguration().getUserAgent()
          .substring(LeaseApi.USER_AGENT_PREFIX.length());
      try {
        running.hook.reconciling(identity, gadget.getMetadata().getName());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      return new ConfigMapBuilder()
          .withNewMetadata()
              .withNamespace(gadget.getMetadata().getNamespace())
              .withName("dependent-" + gadget.getMetadata().getName())
          .endMetadata()
          .addToData("reconciledBy", identity)
          .build();
    }
  }
}
