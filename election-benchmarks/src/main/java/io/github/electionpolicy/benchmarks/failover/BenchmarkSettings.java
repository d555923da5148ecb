package io.github.electionpolicy.benchmarks.failover;

import io.fabric8.kubernetes.client.Config;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What one run of the benchmark does, parsed from {@code key=value} arguments. Immutable and thread-safe.
 *
 * <p>Keys: {@code timings} ({@code fast,default}), {@code contenders} (the factory names, default all
 * available), {@code rounds.fast} (20), {@code rounds.default} (5), {@code replicas} (3),
 * {@code settle.ms} (how long the replicas run before the leader is stopped; default the larger of 3 s and
 * five retry periods), {@code warmup} (1 discarded graceful round per contender before the first timings),
 * {@code kubeconfig} (none: fabric8's mock API server; a path: the real API server that kubeconfig's current
 * context names, which must listen on a loopback address, see {@link ServerMode}).
 *
 * <pre>{@code
 * BenchmarkSettings settings = BenchmarkSettings.parse("timings=fast", "rounds.fast=20",
 *     "kubeconfig=/tmp/cluster/admin.kubeconfig");
 * ApiServer server = settings.serverMode().start(log);
 * }</pre>
 *
 * @param timings which timings to run, in order
 * @param contenders which columns to run, by factory name; empty means all available
 * @param rounds rounds per timings name (each round is one graceful and one crash failover per contender)
 * @param replicas replicas per round, at least 2
 * @param settle fixed settle time, or empty for the default per timings
 * @param warmupRounds discarded rounds before measuring
 * @param kubeconfig the kubeconfig of a real API server to run on, or empty for the mock
 */
public record BenchmarkSettings(
    List<Timings> timings,
    List<String> contenders,
    Map<String, Integer> rounds,
    int replicas,
    Optional<Duration> settle,
    int warmupRounds,
    Optional<Path> kubeconfig) {

  /**
   * Checks and copies the values.
   *
   * @param timings which timings to run, in order
   * @param contenders which columns to run, by factory name; empty means all available
   * @param rounds rounds per timings name
   * @param replicas replicas per round, at least 2
   * @param settle fixed settle time, or empty for the default per timings
   * @param warmupRounds discarded rounds before measuring
   * @param kubeconfig the kubeconfig of a real API server to run on, or empty for the mock
   * @throws IllegalArgumentException when fewer than 2 replicas or a negative count is given
   */
  public BenchmarkSettings {
    Objects.requireNonNull(kubeconfig, "kubeconfig");
    timings = List.copyOf(timings);
    contenders = List.copyOf(contenders);
    rounds = Map.copyOf(rounds);
    if (replicas < 2) {
      throw new IllegalArgumentException(
          "replicas=" + replicas + " is not valid: accepted values are 2 or more; fix: pass replicas=3");
    }
    if (warmupRounds < 0) {
      throw new IllegalArgumentException(
          "warmup=" + warmupRounds + " is not valid: accepted values are 0 or more; fix: pass warmup=1");
    }
  }

  /**
   * Parses {@code key=value} arguments over the defaults.
   *
   * @param args the arguments
   * @return the settings
   * @throws IllegalArgumentException for an unknown key or a bad value
   */
  public static BenchmarkSettings parse(String... args) {
    List<Timings> timings = List.of(Timings.FAST, Timings.DEFAULT);
    List<String> contenders = List.of();
    Map<String, Integer> rounds = new LinkedHashMap<>(Map.of("fast", 20, "default", 5));
    int replicas = 3;
    Optional<Duration> settle = Optional.empty();
    int warmup = 1;
    Optional<Path> kubeconfig = Optional.empty();
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq < 1) {
        throw new IllegalArgumentException(arg + " is not valid: accepted arguments are key=value; fix: see "
            + "docs/performance.md");
      }
      String key = arg.substring(0, eq).trim();
      String value = arg.substring(eq + 1).trim();
      switch (key) {
        case "timings" -> {
          List<Timings> parsed = new ArrayList<>();
          for (String name : value.split(",")) {
            parsed.add(Timings.named(name));
          }
          timings = parsed;
        }
        case "contenders" -> contenders = Arrays.stream(value.split(",")).map(String::trim).toList();
        case "rounds.fast" -> rounds.put("fast", number(key, value));
        case "rounds.default" -> rounds.put("default", number(key, value));
        case "replicas" -> replicas = number(key, value);
        case "settle.ms" -> settle = Optional.of(Duration.ofMillis(number(key, value)));
        case "warmup" -> warmup = number(key, value);
        case "kubeconfig" -> kubeconfig = Optional.of(kubeconfig(value));
        default -> throw new IllegalArgumentException(key + " is not valid: accepted keys are timings, contenders, "
            + "rounds.fast, rounds.default, replicas, settle.ms, warmup, kubeconfig; fix: see docs/performance.md");
      }
    }
    return new BenchmarkSettings(timings, contenders, rounds, replicas, settle, warmup, kubeconfig);
  }

  /**
   * The server the rounds run on: a real one when {@link #kubeconfig()} names it, else fabric8's mock.
   *
   * @return the mode
   */
  public ServerMode serverMode() {
    return kubeconfig.map(ServerMode::real).orElseGet(ServerMode::mock);
  }

  /**
   * Rounds to measure at these timings.
   *
   * @param timings the timings
   * @return the number of rounds
   */
  public int roundsFor(Timings timings) {
    return rounds.getOrDefault(timings.name(), 5);
  }

  /**
   * How long replicas run before the leader is stopped: the fixed value when given, else the larger of 3 s
   * and five retry periods, so that every follower has tried several times and load has a window to count.
   *
   * @param timings the timings
   * @return the settle time
   */
  public Duration settleFor(Timings timings) {
    return settle.orElseGet(() -> {
      Duration fiveRetries = timings.retryPeriod().multipliedBy(5);
      Duration floor = Duration.ofSeconds(3);
      return fiveRetries.compareTo(floor) > 0 ? fiveRetries : floor;
    });
  }

  /**
   * A readable kubeconfig whose current context names a server on a loopback address: the only place where each
   * replica can have a TCP proxy of its own in front of the server, which a crash needs to cut.
   */
  private static Path kubeconfig(String value) {
    String accepted = "accepted values are the path of a readable kubeconfig file whose current context names an "
        + "API server on a loopback address (127.0.0.1, ::1 or localhost)";
    if (value.isEmpty()) {
      throw new IllegalArgumentException("kubeconfig=" + value + " is not valid: " + accepted + "; fix: leave "
          + "kubeconfig out to run on fabric8's mock API server, or pass e.g. kubeconfig=DIR/admin.kubeconfig "
          + "after tools/kube-apiserver/cluster.sh start DIR");
    }
    Path path = Path.of(value);
    if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
      throw new IllegalArgumentException("kubeconfig=" + value + " is not valid: no readable file there (resolved "
          + "to " + path.toAbsolutePath() + "); " + accepted + "; fix: pass the admin.kubeconfig that "
          + "tools/kube-apiserver/cluster.sh start DIR wrote into DIR");
    }
    String server;
    try {
      server = Config.fromKubeconfig(path.toFile()).getMasterUrl();
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("kubeconfig=" + value + " is not valid: it cannot be read as a kubeconfig ("
          + e.getMessage() + "); " + accepted + "; fix: check it with kubectl --kubeconfig " + value
          + " get leases", e);
    }
    String host = server == null ? null : URI.create(server).getHost();
    if (host == null || !(host.equals("localhost") || host.startsWith("127.") || host.equals("[::1]"))) {
      throw new IllegalArgumentException("kubeconfig=" + value + " is not valid: its server " + server + " is not "
          + "on a loopback address, so no proxy can be put in front of it to crash a replica; " + accepted
          + "; fix: run the benchmark on the machine of the API server, e.g. against "
          + "tools/kube-apiserver/cluster.sh");
    }
    return path;
  }

  private static int number(String key, String value) {
    try {
      int n = Integer.parseInt(value);
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below with the accepted values
    }
    throw new IllegalArgumentException(
        key + "=" + value + " is not valid: accepted values are whole numbers 0 or more; fix: pass e.g. " + key + "=5");
  }
}
