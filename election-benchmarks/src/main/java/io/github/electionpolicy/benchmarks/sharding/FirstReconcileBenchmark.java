package io.github.electionpolicy.benchmarks.sharding;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.fabric8.ShardService;
import io.github.electionpolicy.fabric8.ShardedRunner;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * How soon a moved shard's objects are reconciled by their new owner, warm against cold, with {@code objects}
 * ConfigMaps (random uids) on the embedded mock API server: replica B owns half of the shards, then closes; for each
 * shard that moves to replica A, the time from B's release of the shard's Lease, or its hand-over of it to A by name
 * (the server's record of the write), to A's first reconcile of an object of that shard. <b>Warm</b>: A's informer has listed and watched every ConfigMap all
 * along and its shard's {@code start} reconciles from the cache (docs/sharding.md's recipe), with 16 shards (8 move)
 * and with 1 (a leader's hand-over). <b>Cold</b>, with 1 shard: the shard's {@code start} starts an informer, waits
 * for its list, then reconciles (what an operator per term does: docs/josdk.md). Arguments {@code key=value}: {@code
 * objects} (10000), {@code rounds} (3), {@code kubeconfig} (none: the embedded mock API server in CRUD mode, in this
 * JVM; else a real one, whose own work then runs outside the measured JVM).
 */
public final class FirstReconcileBenchmark {

  private static final ElectionDecision CONTEND = ElectionPolicy.defaults().decide(
      Environment.of(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "443")),
      Substrate.usingKubernetesApi("kubernetes"));

  private FirstReconcileBenchmark() {}

  /**
   * Runs both modes and prints a table.
   *
   * @param args {@code key=value} arguments, see the class documentation
   * @throws Exception if a run fails
   */
  public static void main(String[] args) throws Exception {
    run(args, System.out);
  }

  /**
   * Runs the benchmark, printing to {@code out}.
   *
   * @param args {@code key=value} arguments, see the class documentation
   * @param out where the lines and the table go
   * @throws Exception if a run fails
   */
  public static void run(String[] args, java.io.PrintStream out) throws Exception {
    int objects = 10_000;
    int rounds = 3;
    java.util.Optional<java.nio.file.Path> kubeconfig = java.util.Optional.empty();
    for (String arg : args) {
      if (arg.startsWith("objects=")) {
        objects = Integer.parseInt(arg.substring(8));
      } else if (arg.startsWith("rounds=")) {
        rounds = Integer.parseInt(arg.substring(7));
      } else if (arg.startsWith("kubeconfig=")) {
        kubeconfig = java.util.Optional.of(java.nio.file.Path.of(arg.substring(11)));
      } else {
        throw new IllegalArgumentException("unknown argument " + arg + "; accepted: objects=, rounds=, kubeconfig=");
      }
    }
    java.util.Optional<java.nio.file.Path> real = kubeconfig;
    try (LeaseApi api = LeaseApi.builder().namespace("first-reconcile")
        .target(real.map(ApiServerTarget::kubeconfig).orElseGet(ApiServerTarget::embedded)).start()) {
      Config base = real.map(path -> Config.fromKubeconfig(path.toFile()))
          .orElseGet(() -> new ConfigBuilder(Config.empty()).withMasterUrl(api.url()).build());
      KubernetesClient admin = client(api, base);
      long created = System.nanoTime();
      create(admin, objects);
      out.printf("FirstReconcileBenchmark: %d ConfigMaps created in %d ms on %s%n", objects,
          (System.nanoTime() - created) / 1_000_000, real.map(p -> "the real API server of " + p)
              .orElse("the embedded mock API server"));
      out.println("| mode | round | moved shards | median ms | max ms |");
      out.println("|---|---|---|---|---|");
      for (String mode : List.of("warm/16", "warm/1", "cold/1")) {
        Shards shards = Shards.of(mode.endsWith("/16") ? 16 : 1);
        for (int round = 0; round < rounds; round++) {
          List<Long> gaps = round(api, base, mode.startsWith("warm"), shards, "fr-" + mode.replace('/', '-') + "-" + round);
          Collections.sort(gaps);
          out.printf("| %s shards | %d | %d | %d | %d |%n", mode, round + 1, gaps.size(),
              gaps.get(gaps.size() / 2) / 1_000_000, gaps.get(gaps.size() - 1) / 1_000_000);
        }
      }
      admin.close();
    }
  }

  /** The annotation of a hand-over by name (the adapter's {@code LeaseRecords.HAND_OVER_PROOF}). */
  private static final String HAND_OVER_PROOF = "election-policy.io/hand-over-proof";

  private static List<Long> round(LeaseApi api, Config base, boolean warm, Shards shards, String leaseName)
      throws Exception {
    Map<Integer, Long> firstReconcile = new ConcurrentHashMap<>();
    LeaseSettings.Builder settings = LeaseSettings.builder().leaseName(leaseName).namespace(api.namespace())
        .leaseDuration(Duration.ofSeconds(4)).renewDeadline(Duration.ofSeconds(3))
        .retryPeriod(Duration.ofMillis(500)).stopTimeout(Duration.ofSeconds(10))
        .lossPolicy(LossPolicy.recontend()).leadershipEvents(false);
    KubernetesClient clientA = client(api, base);
    KubernetesClient clientB = client(api, base);
    Controller a = new Controller(clientA, warm, shards, (shard, at) -> firstReconcile.putIfAbsent(shard, at));
    Controller b = new Controller(clientB, warm, shards, (shard, at) -> { });
    int count = shards.count();
    // With one shard, B starts first and leads; with 16, A owns all and hands B its half.
    ShardedRunner first = start(count == 1 ? clientB : clientA, settings.identity(count == 1 ? "b" : "a").build(),
        count == 1 ? b : a, shards);
    awaitOwned(first, count);
    ShardedRunner second = start(count == 1 ? clientA : clientB, settings.identity(count == 1 ? "a" : "b").build(),
        count == 1 ? a : b, shards);
    ShardedRunner runnerA = count == 1 ? second : first;
    ShardedRunner runnerB = count == 1 ? first : second;
    awaitOwned(runnerB, (count + 1) / 2);
    awaitOwned(runnerA, count / 2);
    List<Integer> moving = new ArrayList<>(runnerB.ownedShards().keySet());
    // Only shards with objects have a first reconcile (with 10,000 objects, every shard).
    java.util.Set<Integer> nonEmpty = new java.util.HashSet<>();
    clientA.configMaps().list().getItems().forEach(configMap -> nonEmpty.add(shards.shardOf(configMap)));
    moving.retainAll(nonEmpty);
    moving.forEach(firstReconcile::remove);
    runnerB.close();
    awaitOwned(runnerA, count);
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!firstReconcile.keySet().containsAll(moving) && System.nanoTime() - deadline < 0) {
      Thread.sleep(5); // the cold mode lists 10,000 objects per shard before its first reconcile
    }
    List<Long> gaps = new ArrayList<>();
    for (int shard : moving) {
      String lease = leaseName + "-shard-" + shard;
      // The old owner's last write of its term: a release, or a hand-over naming the new owner (a leaver's since
      // 2026-12-07; docs/sharding.md), which the new owner takes in with no write of its own.
      long released = api.leaseWrites(lease).stream()
          .filter(w -> w.holder().isEmpty() || w.annotations().containsKey(HAND_OVER_PROOF))
          .mapToLong(LeaseWrite::answeredNanos).max().orElseThrow();
      gaps.add(firstReconcile.get(shard) - released);
    }
    runnerA.close();
    a.close();
    b.close();
    clientA.close();
    clientB.close();
    return gaps;
  }

  private static ShardedRunner start(KubernetesClient client, LeaseSettings settings, Controller controller,
      Shards shards) {
    return ShardedRunner.builder().client(client).decision(CONTEND).settings(settings).shards(shards.count())
        .service(controller).start();
  }

  private static void awaitOwned(ShardedRunner runner, int count) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (runner.ownedShards().size() != count) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException(runner + " does not own " + count + " shards within 60 s");
      }
      Thread.sleep(5); // polls the runner's snapshot
    }
  }

  private static void create(KubernetesClient client, int count) throws Exception {
    Random random = new Random(7);
    ExecutorService pool = Executors.newFixedThreadPool(16);
    List<Future<?>> done = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      String name = "object-" + i;
      String uid = new UUID(random.nextLong(), random.nextLong()).toString();
      done.add(pool.submit(() -> client.configMaps().resource(new ConfigMapBuilder().withNewMetadata()
          .withName(name).withUid(uid).endMetadata().addToData("k", "v").build()).create()));
    }
    for (Future<?> f : done) {
      f.get();
    }
    pool.shutdown();
  }

  private static KubernetesClient client(LeaseApi api, Config base) {
    return new KubernetesClientBuilder().withHttpClientFactory(new JdkHttpClientFactory())
        .withConfig(new ConfigBuilder(base).withNamespace(api.namespace()).build()).build();
  }

  /** Where a controller reports its first reconcile of an object of a shard, at a System.nanoTime() instant. */
  private interface Reconciled {
    void first(int shard, long atNanos);
  }

  /** A controller in one of the two modes; its reconcile only notes the time. */
  private static final class Controller implements ShardService, AutoCloseable {
    private final KubernetesClient client;
    private final boolean warm;
    private final Shards shards;
    private final Reconciled reconciled;
    private final SharedIndexInformer<ConfigMap> shared;
    private final Map<Integer, SharedIndexInformer<ConfigMap>> perShard = new ConcurrentHashMap<>();

    Controller(KubernetesClient client, boolean warm, Shards shards, Reconciled reconciled) {
      this.client = client;
      this.warm = warm;
      this.shards = shards;
      this.reconciled = reconciled;
      this.shared = warm ? client.configMaps().runnableInformer(0) : null;
      if (shared != null) {
        shared.start().toCompletableFuture().join();
      }
    }

    @Override
    public void start(int shard, LeadershipTerm term) {
      SharedIndexInformer<ConfigMap> informer = shared;
      if (!warm) {
        informer = client.configMaps().runnableInformer(0);
        informer.start().toCompletableFuture().join();
        perShard.put(shard, informer);
      }
      for (ConfigMap configMap : informer.getStore().list()) {
        if (shards.shardOf(configMap) == shard) {
          reconciled.first(shard, System.nanoTime());
          break;
        }
      }
    }

    @Override
    public void stop(int shard) {
      SharedIndexInformer<ConfigMap> informer = perShard.remove(shard);
      if (informer != null) {
        informer.close();
      }
    }

    @Override
    public void close() {
      if (shared != null) {
        shared.close();
      }
      perShard.values().forEach(SharedIndexInformer::close);
    }
  }
}
