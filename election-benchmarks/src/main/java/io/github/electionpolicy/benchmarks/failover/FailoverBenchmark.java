package io.github.electionpolicy.benchmarks.failover;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * The failover benchmark command: for every implementation on the class path (the stock fabric8
 * {@code LeaderElector} and our adapter), on one API server, in one run, it measures graceful hand-over,
 * crash take-over and Lease request load at fast and default timings and prints one table per timings with
 * the median, the 95th percentile and the ratio to stock. The server is fabric8's mock API server (replaced by
 * a new one only when a round timed out on a stalled server, which the output reports), or with
 * {@code kubeconfig=PATH} a real API server on this machine, in a namespace of the run's own; there request
 * load cannot be counted (see {@link ServerMode}).
 *
 * <pre>{@code
 * mvn -q install -DskipTests
 * cd election-benchmarks
 * mvn -q exec:exec@failover -Dfailover.args="timings=fast,default rounds.fast=20 rounds.default=5"
 * # on a real API server:
 * ../tools/kube-apiserver/cluster.sh start /tmp/cluster
 * mvn -q exec:exec@failover -Dfailover.args="timings=fast rounds.fast=20 kubeconfig=/tmp/cluster/admin.kubeconfig"
 * ../tools/kube-apiserver/cluster.sh stop /tmp/cluster
 * }</pre>
 *
 * <p>Rounds alternate the order of the implementations, so that neither always runs first after a pause.
 * Each round uses a new Lease and new replicas, each with its own client.
 */
public final class FailoverBenchmark {

  private static final int MAX_ATTEMPTS_ON_THE_MOCK = 3;
  // The mock server reports a blocked write 30 s after it began.
  private static final long STALL_REPORT_DELAY_NANOS = 31_000_000_000L;

  private FailoverBenchmark() {}

  /**
   * Runs the benchmark and prints the tables.
   *
   * @param args {@code key=value} settings, see {@link BenchmarkSettings#parse(String...)}
   * @throws Exception when a round does not complete
   */
  public static void main(String[] args) throws Exception {
    run(BenchmarkSettings.parse(args), System.out);
  }

  /**
   * Runs the benchmark.
   *
   * @param settings what to run
   * @param out where progress and the tables go
   * @return the results, as a table
   * @throws InterruptedException when interrupted
   * @throws TimeoutException when no replica takes over within the lease duration plus a generous margin
   */
  public static ResultTable run(BenchmarkSettings settings, PrintStream out)
      throws InterruptedException, TimeoutException {
    List<ContenderFactory> factories = select(settings.contenders());
    List<String> names = factories.stream().map(ContenderFactory::name).toList();
    EventLog log = new EventLog();
    List<RoundResult> results = new ArrayList<>();
    List<RoundWindow> windows = new ArrayList<>();
    AtomicInteger repeated = new AtomicInteger();
    ServerMode mode = settings.serverMode();
    out.printf(Locale.ROOT, "failover benchmark: %s; contenders %s; %d replicas; java %s; %d cores; %s%n",
        Instant.now(), names, settings.replicas(), System.getProperty("java.version"),
        Runtime.getRuntime().availableProcessors(), settings);
    ServerSlot server = new ServerSlot(mode, log);
    out.println("server: " + server.current.describe());
    try {
      int sequence = 0;
      for (int w = 0; w < settings.warmupRounds() && !settings.timings().isEmpty(); w++) {
        Timings timings = settings.timings().get(0);
        for (ContenderFactory factory : factories) {
          String label = id(factory, timings, "warm" + sequence++);
          RoundResult warm = runRetryingAfterStall(server, current -> new FailoverRound(current, mode.countsRequests(), log,
              factory, timings, Scenario.GRACEFUL, settings.replicas(), settings.settleFor(timings), label), label, out, repeated);
          out.printf(Locale.ROOT, "warm-up %s %s: hand-over %.3f s (discarded)%n", timings.name(), factory.name(),
              warm.handOverNanos() / 1e9);
        }
      }
      for (Timings timings : settings.timings()) {
        int rounds = settings.roundsFor(timings);
        Duration settle = settings.settleFor(timings);
        for (int round = 1; round <= rounds; round++) {
          List<ContenderFactory> order = new ArrayList<>(factories);
          if (round % 2 == 0) {
            java.util.Collections.reverse(order);
          }
          for (ContenderFactory factory : order) {
            for (Scenario scenario : Scenario.values()) {
              String label = id(factory, timings, scenario.name().toLowerCase(Locale.ROOT) + sequence++);
              long begin = System.nanoTime();
              RoundResult result = runRetryingAfterStall(server, current -> new FailoverRound(current,
                  mode.countsRequests(), log, factory, timings, scenario, settings.replicas(), settle, label), label, out, repeated);
              windows.add(new RoundWindow(label, begin, System.nanoTime()));
              results.add(result);
              out.println(progress(result, round, rounds));
            }
          }
        }
      }
    } finally {
      server.current.close();
    }
    ResultTable table = new ResultTable(results, names, mode);
    out.println();
    for (Timings timings : settings.timings()) {
      out.println(table.format(timings));
    }
    if (!mode.repeatsTimedOutRounds()) {
      out.printf(Locale.ROOT, "events in the shared log: %d; %s: Lease requests not counted (%s), Lease writes"
          + " timed when a watch delivered them, no round repeated%n", log.size(), mode, ResultTable.NOT_COUNTED);
      return table;
    }
    List<Long> stalls = log.snapshot().stream()
        .filter(e -> e.kind() == EventKind.MOCK_SERVER_STALL)
        .map(BenchEvent::nanos)
        .toList();
    List<String> overlapping = windows.stream()
        .filter(w -> stalls.stream().anyMatch(s -> s - STALL_REPORT_DELAY_NANOS <= w.end() && s >= w.begin()))
        .map(RoundWindow::label)
        .toList();
    out.printf(Locale.ROOT, "events in the shared log: %d; mock-server stalls reported: %d; measured rounds that"
        + " overlap one: %d %s; rounds repeated on a new server after a timeout: %d%n", log.size(), stalls.size(),
        overlapping.size(), overlapping, repeated.get());
    return table;
  }

  private static RoundResult runRetryingAfterStall(ServerSlot server, Function<ApiServer, FailoverRound> round,
      String label, PrintStream out, AtomicInteger repeated) throws InterruptedException, TimeoutException {
    int attempts = server.mode.repeatsTimedOutRounds() ? MAX_ATTEMPTS_ON_THE_MOCK : 1;
    for (int attempt = 1; ; attempt++) {
      try {
        return round.apply(server.current).run();
      } catch (TimeoutException e) {
        if (attempt == attempts) {
          throw e;
        }
        repeated.incrementAndGet();
        out.printf(Locale.ROOT, "round %s timed out (%s): the mock server can block its event loops for 30 s and"
            + " more once a watch closes while an event is written to it; the round is repeated on a new mock"
            + " server%n", label, e.getMessage());
        server.replace();
      }
    }
  }

  /** The server rounds run on; on the mock, replaced when a round timed out on a stalled one. */
  private static final class ServerSlot {
    private final ServerMode mode;
    private final EventLog log;
    private ApiServer current;

    ServerSlot(ServerMode mode, EventLog log) {
      this.mode = mode;
      this.log = log;
      this.current = mode.start(log);
    }

    void replace() {
      ApiServer stalled = current;
      // Its blocked event loops may hold its shutdown for a minute: stop it in the background.
      Thread stopper = new Thread(stalled::close, "stalled-mock-server-shutdown");
      stopper.setDaemon(true);
      stopper.start();
      current = mode.start(log);
    }
  }

  private record RoundWindow(String label, long begin, long end) {}

  private static List<ContenderFactory> select(List<String> wanted) {
    Map<String, ContenderFactory> available = Contenders.available();
    if (wanted.isEmpty()) {
      return List.copyOf(available.values());
    }
    List<ContenderFactory> selected = new ArrayList<>();
    for (String name : wanted) {
      ContenderFactory factory = available.get(name);
      if (factory == null) {
        throw new IllegalArgumentException("contenders=" + name + " is not valid: accepted values are "
            + String.join(", ", available.keySet()) + "; fix: pass one of them");
      }
      selected.add(factory);
    }
    return selected;
  }

  private static String id(ContenderFactory factory, Timings timings, String round) {
    return factory.name() + "-" + timings.name() + "-" + round;
  }

  private static String progress(RoundResult r, int round, int rounds) {
    String crash = r.sinceLastRenewNanos().isPresent()
        ? String.format(Locale.ROOT, ", since last renew %.3f s, acquire since last renew %.3f s%s",
            r.sinceLastRenewNanos().getAsLong() / 1e9, r.acquireSinceLastRenewNanos().orElse(0) / 1e9,
            r.violatesLeaseDuration() ? " VIOLATION" : "")
        : "";
    String load = r.leaderRequestsPerMinute().isPresent() && r.followerRequestsPerMinute().isPresent()
        ? String.format(Locale.ROOT, "; leader %.1f req/min, follower %.1f req/min",
            r.leaderRequestsPerMinute().getAsDouble(), r.followerRequestsPerMinute().getAsDouble())
        : "";
    return String.format(Locale.ROOT, "%s %s %s round %d/%d: hand-over %.3f s%s%s", r.timings().name(),
        r.contender(), r.scenario().name().toLowerCase(Locale.ROOT), round, rounds, r.handOverNanos() / 1e9, crash,
        load);
  }
}
