package io.github.electionpolicy.benchmarks.scale;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.benchmarks.failover.Distribution;
import io.github.electionpolicy.benchmarks.failover.Timings;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * The first election, taken apart: one replica on an empty Lease, ours and stock one after the other, many
 * trials on one warm client, each with a new Lease. For each trial it stamps {@code start()}, every request and
 * answer the client saw (an HTTP interceptor) and the instant of leading, and reports the median of each step:
 * start to the first request, the access reviews, the read, the take, and the hops between them.
 *
 * <pre>{@code
 * java -cp ... io.github.electionpolicy.benchmarks.scale.FirstElectionProbe trials=30 [kubeconfig=PATH]
 * }</pre>
 *
 * <p>Arguments: {@code trials} (30), {@code warmup} (5 discarded trials per contender), {@code kubeconfig} (as
 * in the scale benchmark), {@code latency.ms} (0; the embedded server holds each answer back that long).
 * Timings are the defaults (15 s / 10 s / 2 s); a first election on an empty Lease does
 * not wait on them. The system property {@code -Dprobe.norbac=true} turns our runner's RBAC preflight off, to
 * measure what the preflight's review beside the first read costs.
 */
public final class FirstElectionProbe {

  // latency.ms: how long the embedded server holds each answer back (0: not at all).
  private static long latencyMillis;

  private FirstElectionProbe() {}

  /**
   * Runs the probe and prints the breakdown.
   *
   * @param args {@code trials=N warmup=N kubeconfig=PATH}
   * @throws Exception when a trial does not lead within 30 s
   */
  public static void main(String[] args) throws Exception {
    int trials = 30;
    int warmup = 5;
    List<String> rest = new ArrayList<>();
    for (String arg : args) {
      if (arg.startsWith("latency.ms=")) {
        latencyMillis = Long.parseLong(arg.substring(11));
      } else if (arg.startsWith("trials=")) {
        trials = Integer.parseInt(arg.substring(7));
      } else if (arg.startsWith("warmup=")) {
        warmup = Integer.parseInt(arg.substring(7));
      } else {
        rest.add(arg);
      }
    }
    ScaleSettings settings = ScaleSettings.parse(rest.toArray(String[]::new));
    run(settings, trials, warmup, System.out);
    System.exit(0);
  }

  /**
   * Runs the trials.
   *
   * @param settings the server (kubeconfig) and contenders to probe
   * @param trials measured trials per contender
   * @param warmup discarded trials per contender
   * @param out where the breakdown goes
   * @return median start-to-lead seconds by contender
   * @throws InterruptedException when interrupted
   * @throws TimeoutException when a trial does not lead within 30 s
   */
  public static Map<String, Distribution> run(ScaleSettings settings, int trials, int warmup, PrintStream out)
      throws InterruptedException, TimeoutException {
    Map<String, Distribution> result = new LinkedHashMap<>();
    RequestTimeline timeline = new RequestTimeline();
    try (SharedServer server = new SharedServer(settings.kubeconfig(), latencyMillis);
        KubernetesClient client = server.newClient(timeline)) {
      out.println("first-election probe: " + server.describe() + "; load average "
          + java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
      client.leases().inNamespace(server.namespace()).withName("probe-warm").get();
      Map<String, Map<String, List<Double>>> steps = new LinkedHashMap<>();
      int sequence = 0;
      for (int t = 0; t < warmup + trials; t++) {
        for (String contender : settings.contenders()) {
          String lease = "probe-" + contender + "-" + sequence++;
          ScaleContender replica = contender.equals("ours")
              ? ScaleContender.ours(client, server.namespace(), lease, lease + "-replica", Timings.DEFAULT)
              : ScaleContender.stock(client, server.namespace(), lease, lease + "-replica", Timings.DEFAULT);
          replica.start();
          long deadline = System.nanoTime() + 30_000_000_000L;
          while (!replica.hasLed()) {
            if (System.nanoTime() > deadline) {
              throw new TimeoutException(contender + " did not lead " + lease + " within 30 s");
            }
            Thread.sleep(1);
          }
          List<RequestTimeline.Event> events = timeline.since(replica.startedAt());
          replica.close();
          Thread.sleep(50);
          if (t < warmup) {
            continue;
          }
          Map<String, Double> trial = breakdown(replica.startedAt(), replica.ledAt(), events);
          trial.forEach((step, seconds) -> steps.computeIfAbsent(contender, c -> new LinkedHashMap<>())
              .computeIfAbsent(step, s -> new ArrayList<>()).add(seconds));
          if (t == warmup) {
            out.println(contender + " trial " + (t - warmup + 1) + " timeline: " + describe(replica.startedAt(),
                replica.ledAt(), events));
          }
        }
      }
      out.println();
      out.println("| contender | step | median (ms) | p95 (ms) | max (ms) |");
      out.println("|---|---|---|---|---|");
      steps.forEach((contender, byStep) -> byStep.forEach((step, values) -> {
        Distribution d = Distribution.of(values);
        out.printf(Locale.ROOT, "| %s | %s | %.1f | %.1f | %.1f |%n", contender, step, d.median() * 1e3,
            d.p95() * 1e3, d.max() * 1e3);
        if (step.equals("start() to leading")) {
          result.put(contender, d);
        }
      }));
    }
    return result;
  }

  /** The steps of one trial, in seconds; only the requests sent before it led count. */
  private static Map<String, Double> breakdown(long start, long led, List<RequestTimeline.Event> events) {
    Map<String, Double> steps = new LinkedHashMap<>();
    steps.put("start() to leading", (led - start) / 1e9);
    List<RequestTimeline.Event> before = events.stream().filter(e -> e.nanos() <= led).toList();
    long firstSent = before.stream().filter(RequestTimeline.Event::sent).mapToLong(RequestTimeline.Event::nanos)
        .min().orElse(led);
    steps.put("start() to first request sent", (firstSent - start) / 1e9);
    // The take waits for the reviews' verdict (and the read); the reviews that answer after it was sent (watch,
    // asked once the verdict is given) are off the start path and not counted.
    RequestTimeline.Event take = before.stream().filter(e -> e.sent() && (e.label().equals("create Lease")
        || e.label().equals("update Lease"))).findFirst().orElse(null);
    long takeSent = take == null ? led : take.nanos();
    List<RequestTimeline.Event> reviews = before.stream().filter(e -> e.label().equals("review")
        && e.nanos() <= takeSent).toList();
    long reviewsDone = reviews.isEmpty() ? firstSent : reviews.get(reviews.size() - 1).nanos();
    if (!reviews.isEmpty()) {
      steps.put("access reviews: first sent to last answered", (reviewsDone - reviews.get(0).nanos()) / 1e9);
      steps.put("access reviews sent (a count, not ms)", (double) reviews.stream().filter(RequestTimeline.Event::sent).count() / 1e3);
    }
    long previousAnswer = reviewsDone;
    for (String label : List.of("get Lease", "create Lease", "update Lease")) {
      RequestTimeline.Event sent = first(before, label, true);
      RequestTimeline.Event answered = first(before, label, false);
      if (sent != null && answered != null) {
        // A read sent before the reviews answered overlaps them: its hop counts from the first request.
        long from = sent.nanos() < previousAnswer ? firstSent : previousAnswer;
        steps.put("hop before " + label, (sent.nanos() - from) / 1e9);
        steps.put(label + " round trip", (answered.nanos() - sent.nanos()) / 1e9);
        previousAnswer = Math.max(previousAnswer, answered.nanos());
      }
    }
    steps.put("last answer to leading", (led - previousAnswer) / 1e9);
    return steps;
  }

  private static RequestTimeline.Event first(List<RequestTimeline.Event> events, String label, boolean sent) {
    return events.stream().filter(e -> e.sent() == sent && e.label().equals(label)).findFirst().orElse(null);
  }

  private static String describe(long start, long led, List<RequestTimeline.Event> events) {
    StringBuilder s = new StringBuilder();
    for (RequestTimeline.Event e : events) {
      if (e.nanos() > led) {
        break;
      }
      s.append(String.format(Locale.ROOT, "%+.1f ms %s %s%s; ", (e.nanos() - start) / 1e6, e.sent() ? "sent" : "got",
          e.label(), e.sent() ? "" : " " + e.code()));
    }
    s.append(String.format(Locale.ROOT, "%+.1f ms leading", (led - start) / 1e6));
    return s.toString();
  }
}
