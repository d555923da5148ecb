package io.github.electionpolicy.josdk;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.fabric8.kubernetes.client.utils.Utils;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.fabric8.ShardService;
import io.github.electionpolicy.fabric8.ShardedRunner;
import io.github.electionpolicy.josdk.sample.Widget;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.ControllerConfiguration;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.config.informer.Informer;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;

/**
 * Replicas of a sharded widget operator ({@link ShardedOperator} under a {@link ShardedRunner}, as a controller's
 * {@code main} starts them), each with its own client of the embedded API server, and the shared ledger of every
 * reconciliation: who reconciles what now, when each widget was first reconciled by each replica, and every
 * violation of "a widget is reconciled only by its shard's owner, under that shard's valid term, by one replica at a
 * time".
 */
final class ShardedReplicas implements AutoCloseable {

  static final int SHARDS = 16;

  private final Server server;
  final Map<String, String> inProgress = new ConcurrentHashMap<>();
  /** widget name -> replica -> System.nanoTime() of that replica's first reconciliation of it (since the last reset). */
  final Map<String, Map<String, Long>> firstReconciled = new ConcurrentHashMap<>();
  /** When the latest reconciliation of any replica began ({@code System.nanoTime()}). */
  final AtomicLong lastReconciled = new AtomicLong(System.nanoTime());
  final List<String> violations = new CopyOnWriteArrayList<>();
  final Map<String, Replica> replicas = new ConcurrentHashMap<>();
  /** shard -> replica -> System.nanoTime() when the replica's runner last started the shard's work. */
  final Map<Integer, Map<String, Long>> shardStarted = new ConcurrentHashMap<>();
  /** shard -> replica -> System.nanoTime() when the replica's stop of the shard's work last returned. */
  final Map<Integer, Map<String, Long>> shardStopped = new ConcurrentHashMap<>();
  /** "shard@replica" for each shard whose stop began in that replica since the replica last started it. */
  final java.util.Set<String> stopBegun = ConcurrentHashMap.newKeySet();
  private final List<KubernetesClient> clients = new CopyOnWriteArrayList<>();
  /** Called in each reconciliation, after the ledger recorded it; a test may hold a reconciliation here. */
  volatile Hook hook = (identity, widget) -> { };

  /** What a test does inside a reconciliation. */
  interface Hook {
    void reconciling(String identity, String widget) throws InterruptedException;
  }

  /** Replicas on fabric8's mock API server of {@code api}, each through a proxy of its own. */
  ShardedReplicas(LeaseApiExtension api) {
    this.server = new Server() {
      @Override
      public String namespace() {
        return api.namespace();
      }

      @Override
      public KubernetesClient leaseClient(String identity) {
        return api.replica(identity).client();
      }

      @Override
      public KubernetesClient creatingClient() {
        return new KubernetesClientBuilder().withConfig(new ConfigBuilder(api.client().getConfiguration())
            .withMasterUrl(api.url()).withHttp2Disable(true).build()).build();
      }
    };
  }

  private ShardedReplicas(Server server) {
    this.server = server;
  }

  /**
   * Replicas on the real kube-apiserver of {@code kubeconfig} (one allowed to create namespaces and CRDs, such as
   * {@code tools/kube-apiserver/cluster.sh}'s admin.kubeconfig), in a namespace of their own, whose widgets and Leases
   * {@link #close} deletes, and then the namespace: creates the namespace and the Widget CRD, if missing, and waits
   * until the CRD is established.
   */
  static ShardedReplicas onRealServer(java.nio.file.Path kubeconfig) {
    Config fromFile;
    try {
      fromFile = Config.fromKubeconfig(null, java.nio.file.Files.readString(kubeconfig), kubeconfig.toString());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    String namespace = "josdk-move-" + Long.toHexString(RANDOM.nextLong() & 0xffffffL);
    // The replicas' clients are of the namespace: the reconciler watches the client's own (WATCH_CURRENT_NAMESPACE).
    Config config = new ConfigBuilder(fromFile).withNamespace(namespace).build();
    try (KubernetesClient admin = new KubernetesClientBuilder().withConfig(config).build()) {
      admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
          .create();
      CustomResourceDefinition crd = new CustomResourceDefinitionBuilder()
          .withNewMetadata().withName("widgets.example.electionpolicy.io").endMetadata()
          .withNewSpec().withGroup("example.electionpolicy.io").withScope("Namespaced")
          .withNewNames().withKind("Widget").withPlural("widgets").withSingular("widget").endNames()
          .addNewVersion().withName("v1").withServed(true).withStorage(true)
          .withNewSchema().withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
          .endOpenAPIV3Schema().endSchema().endVersion()
          .endSpec().build();
      admin.apiextensions().v1().customResourceDefinitions().resource(crd).createOr(NonDeletingOperation::update);
      admin.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName())
          .waitUntilCondition(c -> c != null && c.getStatus() != null && c.getStatus().getConditions().stream()
              .anyMatch(k -> "Established".equals(k.getType()) && "True".equals(k.getStatus())), 1,
              java.util.concurrent.TimeUnit.MINUTES);
    }
    Config http1 = new ConfigBuilder(config).withHttp2Disable(true).build();
    List<KubernetesClient> leaseClients = new CopyOnWriteArrayList<>();
    return new ShardedReplicas(new Server() {
      @Override
      public String namespace() {
        return namespace;
      }

      @Override
      public KubernetesClient leaseClient(String identity) {
        KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build();
        leaseClients.add(client);
        return client;
      }

      @Override
      public KubernetesClient creatingClient() {
        return new KubernetesClientBuilder().withConfig(http1).build();
      }

      @Override
      public void close() {
        leaseClients.forEach(KubernetesClient::close);
        // The test cluster runs no namespace controller: a deleted namespace would keep its objects, so they go first.
        try (KubernetesClient admin = new KubernetesClientBuilder().withConfig(config).build()) {
          admin.resources(Widget.class).inNamespace(namespace).delete();
          admin.leases().inNamespace(namespace).delete();
          admin.namespaces().withName(namespace).delete();
        }
      }
    });
  }

  /** Where the replicas run: a namespace, and the clients of it. */
  private interface Server {
    String namespace();

    /** The client a replica's runner uses for its Leases; {@link #close} closes it. */
    KubernetesClient leaseClient(String identity);

    /** A client for creating widgets, over HTTP/1.1; the caller closes it. */
    KubernetesClient creatingClient();

    /** Closes the Lease clients it made and deletes what the replicas left, if anything. */
    default void close() {}
  }

  /** The namespace of the widgets and the Leases. */
  String namespace() {
    return server.namespace();
  }

  /** One replica: its sharded operator and the runner that owns its shards. */
  record Replica(String identity, ShardedOperator operator, ShardedRunner runner) {
    void close() {
      runner.close();
      operator.close();
    }
  }

  /**
   * Creates {@code count} widgets whose uids spread over the shards, and returns each one's uid, as the server gave it,
   * by name.
   *
   * <p>fabric8 7.6.1's mock server ignores the uid a create sends: it sets {@code Utils.generateId()}, a JVM-wide
   * counter ({@code 00000000-0000-0000-0000-00000000002a}), and FNV-1a's top bits hardly depend on a key's last
   * characters, so its uids fall in one or two shards. The embedded server runs in this JVM, so each create first sets
   * that counter to a random value (through reflection: it is private), which makes the uid's last 16 hex digits
   * random; {@code theMockKeepsTheUidsItIsGiven...} checks the spread.
   */
  Map<String, String> createWidgets(int count) {
    // Straight to the server over HTTP/1.1, not through the fixture's client: thousands of creates through the
    // replica proxy with the JDK client's HTTP/2 upgrade ran out of file descriptors. A few at a time, since the
    // mock server takes long for each; the uid counter set concurrently still gives each create a random uid.
    Map<String, String> uids = new ConcurrentSkipListMap<>();
    ExecutorService creators = Executors.newFixedThreadPool(count >= 1000 ? 4 : 1);
    try (KubernetesClient creating = server.creatingClient()) {
      List<Future<?>> creates = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        String name = "w-" + i;
        creates.add(creators.submit(() -> {
          Widget widget = Widget.named(server.namespace(), name, "blue");
          widget.getMetadata().setUid(UUID.randomUUID().toString());  // what a real API server would ignore too
          MOCK_UIDS.set(RANDOM.nextLong());
          Widget created = creating.resources(Widget.class).inNamespace(server.namespace()).resource(widget).create();
          uids.put(created.getMetadata().getName(), created.getMetadata().getUid());
        }));
      }
      for (Future<?> create : creates) {
        create.get();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("a widget could not be created", e.getCause());
    } finally {
      creators.shutdownNow();
    }
    return new TreeMap<>(uids);
  }

  private static final Random RANDOM = new Random();
  private static final AtomicLong MOCK_UIDS = mockUidCounter();

  private static AtomicLong mockUidCounter() {
    try {
      Field field = Utils.class.getDeclaredField("leastSigBits");
      field.setAccessible(true);
      return (AtomicLong) field.get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("fabric8's Utils.generateId() is no longer the counter this fixture sets", e);
    }
  }

  /**
   * The replicas' reconciliation threads ({@code -Delection.josdk.measure.threads=N}, for ShardedOperatorMoveTimeTest's
   * measurements); 0, the default: JOSDK's own (50).
   */
  static final int RECONCILIATION_THREADS = Integer.getInteger("election.josdk.measure.threads", 0);

  Replica start(String identity) {
    return start(identity, UnaryOperator.identity());
  }

  Replica start(String identity, UnaryOperator<LeaseSettings.Builder> settings) {
    // HTTP/1.1 only: with a list of thousands of widgets, the JDK client's HTTP/2 upgrade against the mock server
    // fails ("Frame type(109) ... exceeds MAX_FRAME_SIZE"), which a real API server (HTTP/2 over TLS) never shows.
    KubernetesClient client = server.leaseClient(identity);
    KubernetesClient operatorClient = new KubernetesClientBuilder().withConfig(new ConfigBuilder(
        client.getConfiguration()).withHttp2Disable(true).build()).build();
    clients.add(operatorClient);
    ShardedOperator operator = ShardedOperator.builder()
        .client(operatorClient)
        .shards(SHARDS)
        .configuration(config -> {
          if (RECONCILIATION_THREADS > 0) {
            config.withConcurrentReconciliationThreads(RECONCILIATION_THREADS);
          }
        })
        .reconcilers((josdk, shards) -> josdk.register(new LedgerReconciler(identity, shards)))
        .start();
    ShardedRunner runner = ShardedRunner.builder()
        .client(client)
        .decide(ElectionPolicy.defaults(), Environment.of(Map.of()), OperatorReplicas.SUBSTRATE)
        .settings(settings.apply(OperatorReplicas.settings(identity).namespace(server.namespace())
            // RECONTEND: under EXIT a shard lost on a loaded machine stops the replica (its exiter returns here).
            .lossPolicy(LossPolicy.recontend())).build())
        .shards(SHARDS)
        .service(new ShardService() {
          @Override
          public void start(int shard, LeadershipTerm term) {
            shardStarted.computeIfAbsent(shard, s -> new ConcurrentHashMap<>()).put(identity, System.nanoTime());
            stopBegun.remove(shard + "@" + identity);
            operator.start(shard, term);
          }

          @Override
          public void stop(int shard) {
            stopBegun.add(shard + "@" + identity); // before the operator takes the shard away, so a reconciliation sees it
            operator.stop(shard);
            shardStopped.computeIfAbsent(shard, s -> new ConcurrentHashMap<>()).put(identity, System.nanoTime());
          }
        })
        .start();
    Replica replica = new Replica(identity, operator, runner);
    replicas.put(identity, replica);
    return replica;
  }

  /**
   * Watches the shard Leases from the fixture's own client and records, for each shard, the {@code System.nanoTime()}
   * at which the watch first delivered it released (no holder) or handed over (a term written for the next holder,
   * with its proof) after this call: the instant a move's clock starts from. Closing the returned handle ends the
   * watch.
   */
  AutoCloseable recordReleases(Map<Integer, Long> releasedAt) {
    return recordReleases(releasedAt, new java.util.concurrent.ConcurrentHashMap<>());
  }

  /**
   * As {@link #recordReleases(Map)}, and also, in {@code stampedAt}, when the old owner made each release or hand-over:
   * the {@code renewTime} it wrote (the protocol stamps it as it decides to write, before the request is sent), on
   * this JVM's {@link System#nanoTime()} (the replicas run in it, on the same wall clock). A measure from it cannot
   * read short, as one from the fixture's watch event can when that watch lags; it reads long by the write's round trip.
   */
  AutoCloseable recordReleases(Map<Integer, Long> releasedAt, Map<Integer, Long> stampedAt) {
    java.time.Instant wallNow = java.time.Instant.now();
    long nanoNow = System.nanoTime();
    long wallToNano = nanoNow - (wallNow.getEpochSecond() * 1_000_000_000L + wallNow.getNano());
    KubernetesClient watching = server.creatingClient();
    java.util.regex.Pattern shardLease = java.util.regex.Pattern.compile(
        java.util.regex.Pattern.quote(OperatorReplicas.LEASE) + "-shard-(\\d+)");
    io.fabric8.kubernetes.client.Watch watch = watching.leases().inNamespace(server.namespace())
        .watch(new io.fabric8.kubernetes.client.Watcher<io.fabric8.kubernetes.api.model.coordination.v1.Lease>() {
          @Override
          public void eventReceived(Action action, io.fabric8.kubernetes.api.model.coordination.v1.Lease lease) {
            long now = System.nanoTime();
            var matched = shardLease.matcher(lease.getMetadata().getName());
            String holder = lease.getSpec() == null ? null : lease.getSpec().getHolderIdentity();
            boolean handedOver = lease.getMetadata().getAnnotations() != null
                && lease.getMetadata().getAnnotations().containsKey("election-policy.io/hand-over-proof");
            if (action == Action.MODIFIED && matched.matches() && (holder == null || holder.isEmpty() || handedOver)) {
              releasedAt.putIfAbsent(Integer.parseInt(matched.group(1)), now);
              if (lease.getSpec().getRenewTime() != null) {
                java.time.Instant stamp = lease.getSpec().getRenewTime().toInstant();
                stampedAt.putIfAbsent(Integer.parseInt(matched.group(1)),
                    stamp.getEpochSecond() * 1_000_000_000L + stamp.getNano() + wallToNano);
              }
            }
          }

          @Override
          public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {}
        });
    return () -> {
      watch.close();
      watching.close();
    };
  }

  /**
   * The shards' releases and hand-overs as the API server dated them, from its audit log ({@code
   * AUDIT_LEASE_WRITES=1 tools/kube-apiserver/cluster.sh start DIR} writes {@code DIR/audit.log}): for each shard
   * Lease of this fixture's namespace, the first successful update at or after {@code after} whose body releases it
   * (no holder) or hands it over (with its proof), as two instants on this JVM's {@link System#nanoTime()}: when the
   * server received the request and when its answer was complete. The write took effect between the two; the audit
   * log's timestamps are the server's (microseconds), on the wall clock this JVM shares.
   */
  Map<Integer, long[]> auditedReleases(java.nio.file.Path auditLog, java.time.Instant after) throws Exception {
    java.time.Instant wallNow = java.time.Instant.now();
    long wallToNano = System.nanoTime() - (wallNow.getEpochSecond() * 1_000_000_000L + wallNow.getNano());
    java.util.regex.Pattern shardLease = java.util.regex.Pattern.compile(
        java.util.regex.Pattern.quote(OperatorReplicas.LEASE) + "-shard-(\\d+)");
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    Map<Integer, long[]> released = new TreeMap<>();
    for (String line : java.nio.file.Files.readAllLines(auditLog)) {
      com.fasterxml.jackson.databind.JsonNode event = json.readTree(line);
      com.fasterxml.jackson.databind.JsonNode ref = event.path("objectRef");
      var matched = shardLease.matcher(ref.path("name").asText());
      if (!"update".equals(event.path("verb").asText()) || !server.namespace().equals(ref.path("namespace").asText())
          || !matched.matches() || event.path("responseStatus").path("code").asInt() != 200) {
        continue;
      }
      java.time.Instant received = java.time.Instant.parse(event.path("requestReceivedTimestamp").asText());
      java.time.Instant complete = java.time.Instant.parse(event.path("stageTimestamp").asText());
      com.fasterxml.jackson.databind.JsonNode body = event.path("requestObject");
      String holder = body.path("spec").path("holderIdentity").asText("");
      boolean handedOver = body.path("metadata").path("annotations").has("election-policy.io/hand-over-proof");
      if (received.isBefore(after) || !(holder.isEmpty() || handedOver)) {
        continue;
      }
      released.putIfAbsent(Integer.parseInt(matched.group(1)), new long[] {
          received.getEpochSecond() * 1_000_000_000L + received.getNano() + wallToNano,
          complete.getEpochSecond() * 1_000_000_000L + complete.getNano() + wallToNano});
    }
    return released;
  }

  /** The widgets {@code identity} has reconciled since the last reset. */
  boolean reconciledBy(String widget, String identity) {
    Map<String, Long> by = firstReconciled.get(widget);
    return by != null && by.containsKey(identity);
  }

  @Override
  public void close() {
    replicas.values().forEach(Replica::close);
    clients.forEach(KubernetesClient::close);
    server.close();
  }

  /** Records each reconciliation in the ledger; a reconciliation waits a little, as one that calls an API does. */
  @ControllerConfiguration(informer = @Informer(namespaces = Constants.WATCH_CURRENT_NAMESPACE))
  final class LedgerReconciler implements Reconciler<Widget> {
    private final String identity;
    private final ShardedOperator shards;

    LedgerReconciler(String identity, ShardedOperator shards) {
      this.identity = identity;
      this.shards = shards;
    }

    @Override
    public UpdateControl<Widget> reconcile(Widget widget, Context<Widget> context) throws InterruptedException {
      long now = System.nanoTime();
      lastReconciled.set(now);
      String name = widget.getMetadata().getName();
      String other = inProgress.putIfAbsent(name, identity);
      if (other != null) {
        violations.add(name + " reconciled by " + identity + " while " + other + " reconciles it");
      }
      try {
        LeadershipTerm term = shards.termFor(widget).orElse(null);
        // A reconciliation begins only while its shard is owned here (the operator's gate); one that began before the
        // shard's stop began finds no term and no client from then on (no new work may begin; its stop waits for it).
        boolean stopping = stopBegun.contains(shards.shards().shardOf(widget) + "@" + identity);
        if (term == null ? !stopping : !term.holderIdentity().equals(identity)) {
          violations.add(name + " (shard " + shards.shards().shardOf(widget) + ") reconciled by " + identity
              + " under " + term);
        }
        // The stop's mark read again after the client: a stop that began after the first read took the term, and its
        // gate, away meanwhile (stopBegun is set before the operator releases the shard).
        if (shards.clientFor(widget).isEmpty()
            && !stopBegun.contains(shards.shards().shardOf(widget) + "@" + identity)) {
          violations.add(name + " reconciled by " + identity + " with no client of its shard's term");
        }
        firstReconciled.computeIfAbsent(name, n -> new ConcurrentHashMap<>()).putIfAbsent(identity, now);
        hook.reconciling(identity, name);
        // Must wait: holds the widget for a moment, as a reconciliation that calls an API does, so that an overlap
        // would show; the time is the reconciliation's own cost.
        Thread.sleep(1);
      } finally {
        inProgress.remove(name, identity);
      }
      return UpdateControl.noUpdate();
    }
  }
}
