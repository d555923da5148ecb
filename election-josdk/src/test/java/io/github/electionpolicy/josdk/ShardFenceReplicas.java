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
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import io.fabric8.kubernetes.api.model.HasMetadata;
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

  /** Starts a replica whose reconciler has no finalizer ({@code withCleaner} false) or one. */
  ShardedReplicas.Replica start(String identity, boolean withCleaner) {
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
        .configuration(o -> o.withMetrics(failures).withUseSSAToPatchPrimaryResource(false))
        .reconcilers((josdk, shards) -> josdk.register(withCleaner
            ? new CleanedGadgetReconciler(identity) : new GadgetReconciler(identity)))
        .start();
    ShardedRunner runner = ShardedRunner.builder()
        .client(client)
        .decide(ElectionPolicy.defaults(), Environment.of(Map.of()), OperatorReplicas.SUBSTRATE)
        .settings(OperatorReplicas.settings(identity).namespace(api.namespace())
            .lossPolicy(LossPolicy.exit(status -> { })).build())
        .shards(SHARDS)
        .service(operator)
        .start();
    ShardedReplicas.Replica replica = new ShardedReplicas.Replica(identity, operator, runner);
    replicas.add(replica);
    return replica;
  }

  /**
   * The writes (every method but {@code GET}) the server received so far from {@code identity}'s clients to {@code
   * gadget} or its ConfigMap, as {@code METHOD path}.
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
          && (path.contains("/gadgets/" + gadget) || path.contains("/configmaps/gadget-" + gadget))) {
        writes.add(r.getMethod() + " " + path);
      }
    }
    return writes;
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
}
