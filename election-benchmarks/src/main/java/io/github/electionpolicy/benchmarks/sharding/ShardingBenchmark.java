package io.github.electionpolicy.benchmarks.sharding;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.fabric8.ShardedRunner;
import io.github.electionpolicy.fabric8.Shards;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Throughput and hand-offs of a sharded controller: a synthetic controller with {@code keys} keys (random uids, so
 * they spread over the shards as an API server's objects do), whose reconcile waits {@code cost.ms} as an API call
 * would (the machine has 2 cores: a cost that computed would measure the cores, not the sharding), run by {@code
 * workers} workers per replica, for each replica count in {@code replicas}. Per count it reports the reconciles per
 * second once the shards are shared fairly (and that against one replica), the time to a fair share again after one
 * more replica joins and after one leaves (closed), the longest any shard went without an owner meanwhile, and the
 * keys reconciled by two replicas at once, counted by a ledger every reconcile goes through (must be 0).
 *
 * <p>Arguments, {@code key=value}: {@code replicas} (1,2,3,4,5), {@code keys} (10000), {@code shards} (16), {@code
 * workers} (8), {@code cost.ms} (5), {@code measure.s} (10), {@code lease.ms} / {@code renew.ms} / {@code retry.ms}
 * (4000 / 3000 / 500), {@code kubeconfig} (none: the embedded mock API server in CRUD mode; else a real one).
 *
 * <pre>{@code
 * mvn -q exec:exec@sharding -Dsharding.args="replicas=1,2,3,4,5"
 * }</pre>
 */
public final class ShardingBenchmark {

  private static final ElectionDecision CONTEND = ElectionPolicy.defaults().decide(
      Environment.of(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "443")),
      Substrate.usingKubernetesApi("kubernetes"));

  private ShardingBenchmark() {}

  /**
   * Runs the benchmark and prints one line per replica count, then the table.
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
    Map<String, String> given = new LinkedHashMap<>();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq < 1) {
        throw new IllegalArgumentException("argument \"" + arg + "\" is not key=value");
      }
      given.put(arg.substring(0, eq), arg.substring(eq + 1));
    }
    List<Integer> replicaCounts = new ArrayList<>();
    for (String n : given.getOrDefault("replicas", "1,2,3,4,5").split(",")) {
      replicaCounts.add(Integer.parseInt(n.trim()));
    }
    int keyCount = Integer.parseInt(given.getOrDefault("keys", "10000"));
    Shards shards = Shards.of(Integer.parseInt(given.getOrDefault("shards", "16")));
    int workers = Integer.parseInt(given.getOrDefault("workers", "8"));
    long costMillis = Long.parseLong(given.getOrDefault("cost.ms", "5"));
    long measureMillis = Long.parseLong(given.getOrDefault("measure.s", "10")) * 1000;
    Duration lease = Duration.ofMillis(Long.parseLong(given.getOrDefault("lease.ms", "4000")));
    Duration renew = Duration.ofMillis(Long.parseLong(given.getOrDefault("renew.ms", "3000")));
    Duration retry = Duration.ofMillis(Long.parseLong(given.getOrDefault("retry.ms", "500")));
    Optional<Path> kubeconfig = Optional.ofNullable(given.get("kubeconfig")).map(Path::of);

    Random random = new Random(1);
    List<String> keys = new ArrayList<>();
    for (int i = 0; i < keyCount; i++) {
      keys.add(new UUID(random.nextLong(), random.nextLong()).toString());
    }
    // Lease requests by replica (its client's User-Agent), watches and the one list of the controller's Leases apart:
    // what the server must answer, counted on the embedded server.
    Map<String, java.util.concurrent.atomic.AtomicLong> requests = new ConcurrentHashMap<>();
    try (LeaseApi api = LeaseApi.builder().namespace("sharding")
        .target(kubeconfig.map(ApiServerTarget::kubeconfig).orElseGet(ApiServerTarget::embedded))
        .dispatcher(delegate -> new io.fabric8.mockwebserver.http.Dispatcher() {
          @Override
          public io.fabric8.mockwebserver.http.MockResponse dispatch(
              io.fabric8.mockwebserver.http.RecordedRequest request) {
            String path = request.getPath() == null ? "" : request.getPath();
            String agent = request.getHeader("User-Agent");
            if (path.contains("/leases") && !path.contains("watch=true") && agent != null) {
              requests.computeIfAbsent(agent, a -> new java.util.concurrent.atomic.AtomicLong()).incrementAndGet();
            }
            return delegate.dispatch(request);
          }
        }).start()) {
      out.printf("ShardingBenchmark: %s; %d keys, %d shards, %d workers per replica, %d ms per reconcile "
          + "(waiting), lease %s, renew %s, retry %s%n", kubeconfig.map(p -> "real API server " + p)
          .orElse("embedded mock API server"), keyCount, shards.count(), workers, costMillis, lease, renew, retry);
      List<String> rows = new ArrayList<>();
      double single = 0;
      for (int replicas : replicaCounts) {
        Ledger ledger = new Ledger(shards.count());
        String leaseName = "bench-" + replicas + "-" + Long.toHexString(random.nextLong() & 0xffffff);
        List<Replica> running = new ArrayList<>();
        LeaseSettings.Builder settings = LeaseSettings.builder().leaseName(leaseName).namespace(api.namespace())
            .leaseDuration(lease).renewDeadline(renew).retryPeriod(retry).stopTimeout(Duration.ofSeconds(2))
            .lossPolicy(LossPolicy.recontend()).leadershipEvents(false);
        try {
          for (int r = 0; r < replicas; r++) {
            running.add(new Replica("replica-" + r, client(api, kubeconfig, "replica-" + r), settings, shards, keys,
                workers, costMillis, ledger));
          }
          long settleStart = System.nanoTime();
          awaitFair(running, shards.count());
          long settled = System.nanoTime() - settleStart;
          long before = ledger.reconciles();
          long requestsBefore = leaseRequests(requests, replicas);
          long startNanos = System.nanoTime();
          Thread.sleep(measureMillis); // the measured window: workers reconcile meanwhile
          long windowNanos = System.nanoTime() - startNanos;
          double throughput = (ledger.reconciles() - before) * 1e9 / windowNanos;
          double perReplicaPerMinute = (leaseRequests(requests, replicas) - requestsBefore) * 60e9 / windowNanos
              / replicas;
          // Steady state: each replica renews its membership Lease and each shard it owns once per retry period.
          double expected = (1 + (double) shards.count() / replicas) * 60_000 / retry.toMillis();
          if (single == 0) {
            single = replicas == 1 ? throughput : 0;
          }
          ledger.resetGap();
          long upStart = System.nanoTime();
          running.add(new Replica("replica-" + replicas, client(api, kubeconfig, "replica-" + replicas), settings,
              shards, keys, workers, costMillis, ledger));
          awaitFair(running, shards.count());
          long up = System.nanoTime() - upStart;
          long gapUp = ledger.maxGapNanos();
          ledger.resetGap();
          long downStart = System.nanoTime();
          Replica leaving = running.remove(0);
          leaving.close();
          awaitFair(running, shards.count());
          long down = System.nanoTime() - downStart;
          long gapDown = ledger.maxGapNanos();
          String row = String.format("| %d | %.0f | %s | %.0f (%.0f) | %d | %d | %d | %d | %d | %d | %d |", replicas,
              throughput,
              single == 0 ? "-" : String.format("%.2f×", throughput / single), perReplicaPerMinute, expected,
              settled / 1_000_000, up / 1_000_000,
              gapUp / 1_000_000, down / 1_000_000, gapDown / 1_000_000, ledger.keyOverlaps(),
              ledger.shardOverlaps());
          out.println("SHARDING-BENCH " + row);
          rows.add(row);
        } finally {
          for (Replica replica : running) {
            replica.close();
          }
        }
      }
      out.println();
      out.println("| replicas | reconciles/s | against one | Lease requests per replica per minute (1 + S/M per "
          + "retry period) | first fair share ms | +1 replica: fair again ms | longest unowned ms | -1 replica: fair "
          + "again ms | longest unowned ms | keys reconciled twice at once | shards owned twice at once |");
      out.println("|---|---|---|---|---|---|---|---|---|---|---|");
      rows.forEach(out::println);
    }
  }

  private static KubernetesClient client(LeaseApi api, Optional<Path> kubeconfig, String name) {
    Config base = kubeconfig.map(path -> Config.fromKubeconfig(path.toFile()))
        .orElseGet(() -> new ConfigBuilder(Config.empty()).withMasterUrl(api.url()).build());
    return new KubernetesClientBuilder().withHttpClientFactory(new JdkHttpClientFactory())
        .withConfig(new ConfigBuilder(base).withNamespace(api.namespace()).withUserAgent(name).build()).build();
  }

  /** The Lease requests of replicas 0 to {@code count - 1} so far. */
  private static long leaseRequests(Map<String, java.util.concurrent.atomic.AtomicLong> requests, int count) {
    long sum = 0;
    for (int r = 0; r < count; r++) {
      java.util.concurrent.atomic.AtomicLong n = requests.get("replica-" + r);
      sum += n == null ? 0 : n.get();
    }
    return sum;
  }

  /** Waits until every shard is owned by exactly one replica and each owns floor(S/M) or ceil(S/M). */
  private static void awaitFair(List<Replica> replicas, int shardCount) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (!fair(replicas, shardCount)) {
      if (System.nanoTime() - deadline > 0) {
        throw new IllegalStateException("no fair share within 120 s");
      }
      Thread.sleep(2); // polls the runners' snapshots; the figure is rounded to it
    }
  }

  private static boolean fair(List<Replica> replicas, int shardCount) {
    int members = replicas.size();
    boolean[] owned = new boolean[shardCount];
    for (Replica replica : replicas) {
      var shards = replica.runner.ownedShards().keySet();
      if (shards.size() != shardCount / members && shards.size() != (shardCount + members - 1) / members) {
        return false;
      }
      for (int shard : shards) {
        if (owned[shard]) {
          return false;
        }
        owned[shard] = true;
      }
    }
    for (boolean o : owned) {
      if (!o) {
        return false;
      }
    }
    return true;
  }

  /** One replica: a sharded runner and the synthetic controller it runs. */
  private static final class Replica implements AutoCloseable {
    final ShardedRunner runner;
    private final SyntheticController controller;
    private final KubernetesClient client;

    Replica(String identity, KubernetesClient client, LeaseSettings.Builder settings, Shards shards,
        List<String> keys, int workers, long costMillis, Ledger ledger) {
      this.client = client;
      this.controller = new SyntheticController(identity, shards, keys, workers, costMillis, ledger);
      this.runner = ShardedRunner.builder().client(client).decision(CONTEND)
          .settings(settings.identity(identity).build()).shards(shards.count()).service(controller).start();
    }

    @Override
    public void close() {
      runner.close();
      controller.close();
      client.close();
    }
  }
}
