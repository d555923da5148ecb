package io.github.electionpolicy.benchmarks.scale;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.benchmarks.failover.Distribution;
import io.github.electionpolicy.benchmarks.failover.Timings;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

/**
 * The scale benchmark command: N elections (N Leases, one replica each, optionally a second) in one JVM through
 * one shared {@code KubernetesClient}, ours and stock fabric8's {@code LeaderElector} one after the other on one
 * API server, at each timings. For every run it reports the threads (all of them but the embedded mock server's,
 * and the library's own, name prefix {@code election-}) before the client is built, when every election leads
 * and at their peak over a settle window of a few retry periods; the used heap after GC per election; and the
 * time from each Lease's first {@code start()} to its first leader (median, p95, max).
 *
 * <pre>{@code
 * mvn -q -pl election-benchmarks -am package -DskipTests
 * mvn -q -pl election-benchmarks exec:exec@scale -Dscale.args="elections=1,100 timings=default"
 * }</pre>
 *
 * <p>The thread figures of a JVM count every thread it has at the instant: a run after another of ours in the
 * same JVM starts with the library's loop thread already there (it is shared and lives as long as the JVM), so
 * the baseline it reports says so; for clean figures run one configuration per JVM.
 */
public final class ScaleBenchmark {

  private static final Duration QUIET_LIMIT = Duration.ofSeconds(25);

  private ScaleBenchmark() {}

  /**
   * Runs the benchmark and prints the table.
   *
   * @param args {@code key=value} settings, see {@link ScaleSettings#parse(String...)}
   * @throws Exception when an election gets no leader in time
   */
  public static void main(String[] args) throws Exception {
    run(ScaleSettings.parse(args), System.out);
    System.exit(0);
  }

  /**
   * Runs every configuration of the settings.
   *
   * @param settings what to run
   * @param out where progress and the table go
   * @return one result per run, in order
   * @throws InterruptedException when interrupted
   * @throws TimeoutException when some election has no leader within the lead timeout
   */
  public static List<ScaleResult> run(ScaleSettings settings, PrintStream out)
      throws InterruptedException, TimeoutException {
    out.printf(Locale.ROOT, "scale benchmark: %s; java %s; %d cores; load average %.2f; max heap %d MiB; %s%n",
        Instant.now(), System.getProperty("java.version"), Runtime.getRuntime().availableProcessors(),
        ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
        Runtime.getRuntime().maxMemory() >> 20, settings);
    List<ScaleResult> results = new ArrayList<>();
    try (SharedServer server = new SharedServer(settings.kubeconfig()).clientThreads(settings.clientThreads())) {
      out.println("server: " + server.describe());
      int sequence = 0;
      for (Timings timings : settings.timings()) {
        for (int n : settings.elections()) {
          for (String contender : settings.contenders()) {
            ScaleResult result = runOne(server, contender, timings, n, settings, "r" + sequence++, out);
            results.add(result);
          }
        }
      }
    }
    out.println();
    out.println(table(results));
    return results;
  }

  private static ScaleResult runOne(SharedServer server, String contender, Timings timings, int elections,
      ScaleSettings settings, String run, PrintStream out) throws InterruptedException, TimeoutException {
    awaitQuiet();
    ThreadCensus before = ThreadCensus.now();
    KubernetesClient client = server.newClient(null);
    int replicasPerLease = settings.followers() ? 2 : 1;
    List<ScaleContender[]> leases = new ArrayList<>();
    try {
      // Warm the client (its connection, serialisation) so that the first election does not pay for it alone.
      client.leases().inNamespace(server.namespace()).withName("scale-warm").get();
      long heapBefore = usedHeapAfterGc(settings.heapSamples());
      long startAll = System.nanoTime();
      for (int i = 0; i < elections; i++) {
        String lease = "scale-" + contender + "-" + timings.name() + "-" + run + "-" + i;
        ScaleContender[] replicas = new ScaleContender[replicasPerLease];
        for (int r = 0; r < replicasPerLease; r++) {
          String identity = lease + "-replica-" + r;
          replicas[r] = contender.equals("ours")
              ? ScaleContender.ours(client, server.namespace(), lease, identity, timings)
              : ScaleContender.stock(client, server.namespace(), lease, identity, timings);
          replicas[r].start();
        }
        leases.add(replicas);
      }
      double startAllSeconds = (System.nanoTime() - startAll) / 1e9;
      long deadline = System.nanoTime() + settings.leadTimeout().toNanos();
      while (!leases.stream().allMatch(ScaleBenchmark::hasLeader)) {
        if (System.nanoTime() > deadline) {
          long led = leases.stream().filter(ScaleBenchmark::hasLeader).count();
          throw new TimeoutException(contender + " at " + timings.name() + ": " + led + " of " + elections
              + " elections had a leader after lead.timeout.s=" + settings.leadTimeout().toSeconds());
        }
        Thread.sleep(5);
      }
      ThreadCensus leading = ThreadCensus.now();
      long allLedAt = System.nanoTime();
      ThreadCensus atPeak = leading;
      int peakAll = leading.excludingServer();
      int peakLibrary = leading.library();
      long settleEnd = System.nanoTime() + settings.settleFor(timings).toNanos();
      while (System.nanoTime() < settleEnd) {
        Thread.sleep(20);
        ThreadCensus now = ThreadCensus.now();
        peakLibrary = Math.max(peakLibrary, now.library());
        if (now.excludingServer() > peakAll) {
          peakAll = now.excludingServer();
          atPeak = now;
        }
      }
      Optional<ThreadCensus> steady = Optional.empty();
      if (!settings.steady().isZero()) {
        // The pools keep an idle thread 10 s: past that, what is left is what the elections keep using.
        long steadyFrom = allLedAt + settings.steady().toNanos();
        while (System.nanoTime() < steadyFrom) {
          Thread.sleep(20);
        }
        ThreadCensus most = ThreadCensus.now();
        long steadyEnd = System.nanoTime() + settings.steadyWindowFor(timings).toNanos();
        while (System.nanoTime() < steadyEnd) {
          Thread.sleep(20);
          ThreadCensus now = ThreadCensus.now();
          if (now.excludingServer() > most.excludingServer()
              || now.excludingServer() == most.excludingServer() && now.library() > most.library()) {
            most = now;
          }
        }
        steady = Optional.of(most);
      }
      long heapAfter = usedHeapAfterGc(settings.heapSamples());
      List<Double> toLead = new ArrayList<>();
      for (ScaleContender[] replicas : leases) {
        long first = Arrays.stream(replicas).filter(ScaleContender::hasLed).mapToLong(ScaleContender::ledAt).min()
            .orElseThrow();
        toLead.add((first - replicas[0].startedAt()) / 1e9);
      }
      ScaleResult result = new ScaleResult(contender, timings, elections, elections * replicasPerLease, before,
          leading, peakAll, peakLibrary, atPeak, steady, (heapAfter - heapBefore) / (double) elections,
          Distribution.of(toLead), startAllSeconds);
      // Printed before the replicas close: closing a thousand of them one after another can take minutes.
      out.println(progress(result));
      out.print(table(List.of(result)));
      return result;
    } finally {
      long closing = System.nanoTime();
      for (ScaleContender[] replicas : leases) {
        for (ScaleContender replica : replicas) {
          try {
            replica.close();
          } catch (RuntimeException e) {
            out.println("closing a replica failed: " + e);
          }
        }
      }
      client.close();
      out.printf(Locale.ROOT, "closed %d replicas one after another in %.1f s%n",
          leases.size() * replicasPerLease, (System.nanoTime() - closing) / 1e9);
    }
  }

  private static boolean hasLeader(ScaleContender[] replicas) {
    return Arrays.stream(replicas).anyMatch(ScaleContender::hasLed);
  }

  /**
   * Waits until the previous run's pooled threads have ended (the library's pools keep idle threads 10 s; a
   * closed client's take a moment), so the next baseline is this JVM's resting state.
   */
  private static void awaitQuiet() throws InterruptedException {
    long limit = System.nanoTime() + QUIET_LIMIT.toNanos();
    int stableFor = 0;
    int last = -1;
    while (System.nanoTime() < limit) {
      ThreadCensus now = ThreadCensus.now();
      boolean pooled = now.groups().keySet().stream()
          .anyMatch(name -> name.startsWith("election-io") || name.startsWith("election-worker")
              || name.startsWith("election-services"));
      int count = now.excludingServer();
      stableFor = count == last && !pooled ? stableFor + 1 : 0;
      last = count;
      if (stableFor >= 10) {
        return;
      }
      Thread.sleep(100);
    }
  }

  private static long usedHeapAfterGc(int samples) throws InterruptedException {
    long[] used = new long[samples];
    for (int i = 0; i < samples; i++) {
      System.gc();
      Thread.sleep(100);
      used[i] = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }
    Arrays.sort(used);
    return used[samples / 2];
  }

  private static String progress(ScaleResult r) {
    return String.format(Locale.ROOT, "%s %s elections=%d: threads +%d in all, +%d library; to lead median %.3f s;"
        + " added at peak: %s%s", r.timings().name(), r.contender(), r.elections(), r.addedInAll(), r.addedLibrary(),
        r.toLeadSeconds().median(), r.addedGroups(), r.steady().map(c -> String.format(Locale.ROOT,
            "; steady: +%d in all, +%d library: %s", r.addedInAllSteady(), r.addedLibrarySteady(),
            c.addedSince(r.before()))).orElse(""));
  }

  /**
   * The results as a Markdown table.
   *
   * @param results the runs
   * @return the table
   */
  public static String table(List<ScaleResult> results) {
    StringBuilder s = new StringBuilder();
    s.append("| timings | contender | elections | replicas | threads before (all / library) | when all lead "
        + "(all / library) | peak over settle (all / library) | added in all | added library | steady added (all / library) "
        + "| heap per election (KiB) | to lead median (s) | to lead p95 (s) | to lead max (s) | start() of all (s) |\n");
    s.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (ScaleResult r : results) {
      s.append(String.format(Locale.ROOT,
          "| %s | %s | %d | %d | %d / %d | %d / %d | %d / %d | %d | %d | %s | %.1f | %.3f | %.3f | %.3f | %.3f |%n",
          r.timings().name(), r.contender(), r.elections(), r.replicas(), r.before().excludingServer(),
          r.before().library(), r.leading().excludingServer(), r.leading().library(), r.peakExcludingServer(),
          r.peakLibrary(), r.addedInAll(), r.addedLibrary(),
          r.steady().isPresent() ? r.addedInAllSteady() + " / " + r.addedLibrarySteady() : "—",
          r.heapPerElectionBytes() / 1024.0,
          r.toLeadSeconds().median(), r.toLeadSeconds().p95(), r.toLeadSeconds().max(), r.startAllSeconds()));
    }
    s.append("(threads: every live thread but the embedded mock server's own; library: name prefix election-)\n");
    return s.toString();
  }
}
