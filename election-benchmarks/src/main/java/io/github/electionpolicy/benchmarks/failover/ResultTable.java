package io.github.electionpolicy.benchmarks.failover;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Formats the results of a run as Markdown tables, one per timings: median and 95th percentile of every
 * metric for every contender, and the ratio of each contender to {@code stock}. On a server whose requests
 * cannot be counted (a real one behind TLS, see {@link ServerMode}) the load rows read {@value #NOT_COUNTED}.
 * Immutable and thread-safe.
 */
public final class ResultTable {

  /** The column every other contender is compared with. */
  static final String BASELINE = "stock";

  /** What a load cell reads where requests cannot be counted. */
  static final String NOT_COUNTED = "n/a (TLS)";

  private record Metric(String label, Predicate<RoundResult> rounds, Function<RoundResult, Optional<Double>> value,
      String format, boolean load) {}

  private static List<Metric> metrics(ServerMode mode) {
    return List.of(
      new Metric("graceful hand-over: close → new leader's reconcilers start (s)",
          r -> r.scenario() == Scenario.GRACEFUL, r -> Optional.of(r.handOverNanos() / 1e9), "%.3f", false),
      new Metric("crash take-over: crash → new leader's reconcilers start (s)",
          r -> r.scenario() == Scenario.CRASH, r -> Optional.of(r.handOverNanos() / 1e9), "%.3f", false),
      new Metric("crash take-over: old leader's last renew → new leader's reconcilers start (s)",
          r -> r.scenario() == Scenario.CRASH, r -> seconds(r.sinceLastRenewNanos()), "%.3f", false),
      new Metric("crash: old leader's last renew → new leader's acquiring write, " + mode.writeInstants() + " (s)",
          r -> r.scenario() == Scenario.CRASH, r -> seconds(r.acquireSinceLastRenewNanos()), "%.3f", false),
      new Metric("leader Lease requests per minute",
          r -> true, r -> value(r.leaderRequestsPerMinute()), "%.1f", true),
      new Metric("follower Lease requests per minute (each)",
          r -> true, r -> value(r.followerRequestsPerMinute()), "%.1f", true));
  }

  private final List<RoundResult> results;
  private final List<String> contenders;
  private final ServerMode mode;
  private final List<Metric> metrics;

  /**
   * Creates a table over the results.
   *
   * @param results every measured round
   * @param contenders the column names, in order
   * @param mode the server the rounds ran on, which decides what could be measured
   */
  public ResultTable(List<RoundResult> results, List<String> contenders, ServerMode mode) {
    this.results = List.copyOf(results);
    this.contenders = List.copyOf(contenders);
    this.mode = mode;
    this.metrics = metrics(mode);
  }

  /**
   * Every measured round, in the order it ran.
   *
   * @return the results
   */
  public List<RoundResult> results() {
    return results;
  }

  /**
   * The table for one timings, with a header line and the lease-duration violations.
   *
   * @param timings the timings
   * @return Markdown text
   */
  public String format(Timings timings) {
    StringBuilder out = new StringBuilder();
    List<String> compared = contenders.contains(BASELINE)
        ? contenders.stream().filter(c -> !c.equals(BASELINE)).toList()
        : List.of();
    List<String> header = new ArrayList<>(List.of("metric"));
    for (String contender : contenders) {
      header.add(contender + " median");
      header.add(contender + " p95");
    }
    for (String contender : compared) {
      header.add(contender + "/" + BASELINE + " median");
      header.add(contender + "/" + BASELINE + " p95");
    }
    out.append("#### ").append(timings.describe()).append(", rounds: ").append(roundsLine(timings)).append('\n')
        .append('\n');
    row(out, header);
    row(out, header.stream().map(h -> "---").toList());
    for (Metric metric : metrics) {
      List<String> cells = new ArrayList<>(List.of(metric.label()));
      if (metric.load() && !mode.countsRequests()) {
        for (int i = 1; i < header.size(); i++) {
          cells.add(NOT_COUNTED);
        }
        row(out, cells);
        continue;
      }
      for (String contender : contenders) {
        Optional<Distribution> d = distribution(contender, timings, metric);
        cells.add(d.map(x -> String.format(Locale.ROOT, metric.format(), x.median())).orElse("–"));
        cells.add(d.map(x -> String.format(Locale.ROOT, metric.format(), x.p95())).orElse("–"));
      }
      for (String contender : compared) {
        Optional<Distribution> ours = distribution(contender, timings, metric);
        Optional<Distribution> stock = distribution(BASELINE, timings, metric);
        cells.add(ratio(ours.map(Distribution::median), stock.map(Distribution::median)));
        cells.add(ratio(ours.map(Distribution::p95), stock.map(Distribution::p95)));
      }
      row(out, cells);
    }
    out.append('\n');
    for (String contender : contenders) {
      List<RoundResult> crashes = select(contender, timings, r -> r.scenario() == Scenario.CRASH);
      long violations = crashes.stream().filter(RoundResult::violatesLeaseDuration).count();
      OptionalLong minMargin = crashes.stream()
          .filter(r -> r.acquireSinceLastRenewNanos().isPresent())
          .mapToLong(r -> r.acquireSinceLastRenewNanos().getAsLong() - timings.leaseDuration().toNanos())
          .min();
      out.append(String.format(Locale.ROOT,
          "- %s: Lease taken before the lease duration had passed since the last renew: %d of %d crash rounds"
              + "%s%n",
          contender, violations, crashes.size(),
          minMargin.isPresent()
              ? String.format(Locale.ROOT, " (smallest margin over the lease duration: %+.1f ms)",
                  minMargin.getAsLong() / 1e6)
              : ""));
    }
    if (!mode.countsRequests()) {
      out.append("- on the real API server Lease writes are timed when a watch of the harness delivered them, some"
          + " ms after the server applied them and, under load, up to tens of ms after a replica's own watch saw"
          + " them: a margin within that jitter shows no early take-over either way; Lease requests are not"
          + " counted (" + NOT_COUNTED + "): each replica's proxy passes TLS through and cannot read them\n");
    }
    return out.toString();
  }

  /**
   * The results of one contender at one timings, for one metric.
   *
   * @param contender the column name
   * @param timings the timings
   * @param label the metric's label as printed in the table
   * @return the distribution, or empty when no round measured it
   */
  public Optional<Distribution> distribution(String contender, Timings timings, String label) {
    return metrics.stream().filter(m -> m.label().equals(label)).findFirst()
        .flatMap(m -> distribution(contender, timings, m));
  }

  private Optional<Distribution> distribution(String contender, Timings timings, Metric metric) {
    List<Double> values = select(contender, timings, metric.rounds()).stream()
        .map(metric.value())
        .flatMap(Optional::stream)
        .toList();
    return values.isEmpty() ? Optional.empty() : Optional.of(Distribution.of(values));
  }

  private List<RoundResult> select(String contender, Timings timings, Predicate<RoundResult> rounds) {
    return results.stream()
        .filter(r -> r.contender().equals(contender) && r.timings().equals(timings))
        .filter(rounds)
        .toList();
  }

  private String roundsLine(Timings timings) {
    List<String> parts = new ArrayList<>();
    for (String contender : contenders) {
      long graceful = select(contender, timings, r -> r.scenario() == Scenario.GRACEFUL).size();
      long crash = select(contender, timings, r -> r.scenario() == Scenario.CRASH).size();
      parts.add(contender + " " + graceful + " graceful + " + crash + " crash");
    }
    return String.join(", ", parts);
  }

  private static Optional<Double> value(OptionalDouble value) {
    return value.isPresent() ? Optional.of(value.getAsDouble()) : Optional.empty();
  }

  private static Optional<Double> seconds(OptionalLong nanos) {
    return nanos.isPresent() ? Optional.of(nanos.getAsLong() / 1e9) : Optional.empty();
  }

  private static String ratio(Optional<Double> ours, Optional<Double> stock) {
    if (ours.isEmpty() || stock.isEmpty() || stock.get() == 0) {
      return "–";
    }
    double ratio = ours.get() / stock.get();
    return String.format(Locale.ROOT, ratio < 0.1 ? "%.3f" : "%.2f", ratio);
  }

  private static void row(StringBuilder out, List<String> cells) {
    out.append("| ").append(String.join(" | ", cells)).append(" |\n");
  }
}
