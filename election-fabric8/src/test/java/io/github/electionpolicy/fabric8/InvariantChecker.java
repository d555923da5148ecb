package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.fabric8.ServiceLog.Entry;
import io.github.electionpolicy.fabric8.SoakJournal.GracefulClose;
import io.github.electionpolicy.fabric8.SoakJournal.HealthSample;
import io.github.electionpolicy.fabric8.SoakJournal.Outage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Proves the soak's invariants over a whole run, from three independent records: the reconcilers' shared
 * start/stop log, the server's own log of accepted Lease writes, and the soak's journal.
 *
 * <ol>
 *   <li><b>No overlap</b>: no reconciler start while another replica's reconcilers run; the smallest gap
 *       between one run's stop and the next run's start is reported in microseconds.
 *   <li><b>No lost release</b>: every graceful close of the replica whose reconcilers ran made the server
 *       store an empty holder right after that replica's last write, while {@code close()} ran.
 *   <li><b>No early take-over</b>: whenever the server stored a new holder over another live holder, at
 *       least the old record's leaseDurationSeconds had passed since the server last stored a changed spec.
 *   <li><b>Recovery</b>: after every outage some replica leads within lease duration + retry period +
 *       {@link #RECOVERY_MARGIN} of the server's return (0 when the leader rode the outage out).
 *   <li><b>Health tells the truth</b>: see {@link #checkHealth}.
 * </ol>
 *
 * <p>Not thread-safe; used once per soak.
 */
final class InvariantChecker {

  /** Slack for scheduling on a loaded 2-core machine, on top of the timing rules. */
  static final Duration RECOVERY_MARGIN = Duration.ofSeconds(1);
  /** Slack around the renew deadline and the liveness budget when judging readiness and liveness. */
  static final Duration HEALTH_MARGIN = Duration.ofMillis(500);

  /**
   * The outcome of a check.
   *
   * @param cutSamples health samples of a cut-off replica whose last success must still lie within the
   *     renew deadline (must be ready), cut past the renew deadline + margin (must not be ready), cut past the
   *     liveness budget + margin (must not be live): so each health rule was exercised
   * @param violations one line per broken invariant, empty when the run passed
   */
  record Report(int events, int runs, int overlaps, long minGapMicros, int releasesExpected, int lostReleases,
      int takeovers, int earlyTakeovers, long minTakeoverWaitMillis, int outages, long maxRecoveryMillis,
      int healthSamples, int healthViolations, int unrecovered, int[] cutSamples, List<String> violations) {

    String line() {
      return "events=" + events + " overlaps=" + overlaps + " min_gap_us=" + minGapMicros + " lost_releases="
          + lostReleases + " outages=" + outages + " max_recovery_ms=" + maxRecoveryMillis
          + " early_takeovers=" + earlyTakeovers + " health_violations=" + healthViolations + " unrecovered="
          + unrecovered + " | runs=" + runs + " releases_checked=" + releasesExpected + " takeovers=" + takeovers
          + " min_takeover_wait_ms=" + minTakeoverWaitMillis + " health_samples=" + healthSamples
          + " (cut_still_ready=" + cutSamples[0] + " cut_past_deadline=" + cutSamples[1] + " cut_past_budget="
          + cutSamples[2] + ")";
    }
  }

  private final LeaseSettings settings;
  private final SoakJournal journal;
  private final List<String> violations = new ArrayList<>();

  InvariantChecker(LeaseSettings settings, SoakJournal journal) {
    this.settings = settings;
    this.journal = journal;
  }

  Report check(int events, List<Entry> entries, List<LeaseWrite> writes) {
    List<Entry> log = entries.stream().sorted(Comparator.comparingLong(Entry::nanos)).collect(Collectors.toList());
    long[] gap = {Long.MAX_VALUE};
    int overlaps = checkOverlap(log, gap);
    int[] expected = {0};
    int lost = checkReleases(writes, expected);
    long[] minWait = {Long.MAX_VALUE};
    int[] takeovers = {0};
    int early = checkTakeovers(writes, takeovers, minWait);
    long maxRecovery = checkRecoveries(log);
    int[] cutSamples = new int[3];
    int healthViolations = checkHealth(log, cutSamples);
    journal.unrecovered().forEach(u -> violations.add("UNRECOVERED after " + u.event() + ": " + u.states()));
    int runs = (int) log.stream().filter(e -> e.kind() == ServiceLog.Kind.START).count();
    return new Report(events, runs, overlaps, gap[0] == Long.MAX_VALUE ? -1 : gap[0] / 1000, expected[0], lost,
        takeovers[0], early, minWait[0] == Long.MAX_VALUE ? -1 : minWait[0] / 1_000_000,
        journal.outages().size(), maxRecovery, journal.samples().size(), healthViolations,
        journal.unrecovered().size(), cutSamples, List.copyOf(violations));
  }

  private int checkOverlap(List<Entry> log, long[] minGap) {
    Map<String, Entry> running = new LinkedHashMap<>();
    long lastStop = Long.MIN_VALUE;
    int overlaps = 0;
    for (Entry e : log) {
      if (e.kind() == ServiceLog.Kind.START) {
        if (!running.isEmpty()) {
          overlaps++;
          violations.add("OVERLAP: " + e.replica() + " started at " + journal.at(e.nanos()) + " ms while "
              + running.values().stream().map(r -> r.replica() + " (since " + journal.at(r.nanos()) + " ms)")
                  .collect(Collectors.joining(", ")) + " still ran");
        } else if (lastStop != Long.MIN_VALUE) {
          minGap[0] = Math.min(minGap[0], e.nanos() - lastStop);
        }
        running.put(e.replica(), e);
      } else if (running.remove(e.replica()) != null) {
        lastStop = e.nanos();
      }
    }
    return overlaps;
  }

  private int checkReleases(List<LeaseWrite> writes, int[] expected) {
    int lost = 0;
    for (GracefulClose close : journal.closes()) {
      if (!close.wasRunning()) {
        continue;
      }
      expected[0]++;
      boolean released = false;
      for (int i = 1; i < writes.size() && !released; i++) {
        LeaseWrite w = writes.get(i);
        released = w.holder().isEmpty() && writes.get(i - 1).holder().equals(close.identity())
            && w.receivedNanos() - close.startNanos() >= 0 && close.endNanos() - w.answeredNanos() >= 0;
      }
      if (!released) {
        lost++;
        violations.add("LOST RELEASE: " + close.identity() + " led and was closed from "
            + journal.at(close.startNanos()) + " to " + journal.at(close.endNanos())
            + " ms, but the server stored no empty holder after its last write in that time; writes then: "
            + around(writes, close.startNanos() - 1_000_000_000L, close.endNanos() + 1_000_000_000L));
      }
    }
    return lost;
  }

  private int checkTakeovers(List<LeaseWrite> writes, int[] takeovers, long[] minWait) {
    int early = 0;
    long lastSpecChange = Long.MIN_VALUE;
    LeaseWrite previous = null;
    for (LeaseWrite w : writes) {
      if (previous != null && !previous.holder().isEmpty() && !w.holder().isEmpty()
          && !w.holder().equals(previous.holder())) {
        takeovers[0]++;
        long waited = w.receivedNanos() - lastSpecChange;
        minWait[0] = Math.min(minWait[0], waited);
        if (waited < previous.leaseDuration().toNanos()) {
          early++;
          violations.add("EARLY TAKE-OVER: " + w.holder() + " took the Lease from " + previous.holder() + " at "
              + journal.at(w.receivedNanos()) + " ms, only " + waited / 1_000_000 + " ms after the spec last "
              + "changed (lease " + previous.leaseDuration().toNanos() / 1_000_000 + " ms)");
        }
      }
      if (previous == null || !java.util.Objects.equals(previous.spec(), w.spec())) {
        lastSpecChange = w.receivedNanos();
      }
      previous = w;
    }
    return early;
  }

  private long checkRecoveries(List<Entry> log) {
    Duration bound = settings.leaseDuration().plus(settings.retryPeriod()).plus(RECOVERY_MARGIN);
    long max = 0;
    for (Outage outage : journal.outages()) {
      if (outage.stableNanos() < 0) {
        continue;
      }
      long recovery;
      if (activeThroughout(log, outage.returnNanos(), outage.stableNanos())) {
        recovery = 0;
      } else {
        Optional<Entry> next = log.stream().filter(e -> e.kind() == ServiceLog.Kind.START
            && e.nanos() - outage.returnNanos() >= 0).findFirst();
        recovery = next.map(e -> e.nanos() - outage.returnNanos()).orElse(Long.MAX_VALUE);
      }
      max = Math.max(max, recovery / 1_000_000);
      if (recovery > bound.toNanos()) {
        violations.add("SLOW RECOVERY after " + outage.event() + ": no replica led within " + bound.toMillis()
            + " ms of the server's return at " + journal.at(outage.returnNanos()) + " ms");
      }
    }
    return max;
  }

  /** Whether one run was active from {@code from} to {@code to}: the leader rode the outage out. */
  private static boolean activeThroughout(List<Entry> log, long from, long to) {
    Map<String, Long> started = new LinkedHashMap<>();
    for (Entry e : log) {
      if (e.nanos() - to > 0) {
        break;
      }
      if (e.kind() == ServiceLog.Kind.START) {
        started.put(e.replica(), e.nanos());
      } else {
        started.remove(e.replica());
      }
    }
    return started.values().stream().anyMatch(start -> start - from <= 0);
  }

  /**
   * Health must match what the replica's situation and state were when sampled:
   * <ul>
   *   <li>a stopped runner is not ready;
   *   <li>a replica cut off for at least lease duration + request timeout + margin (a watching follower's
   *       window; a leader's is the renew deadline) is not ready, and not live past the liveness
   *       budget + margin; a cut-off replica reports no Lease success since the cut;
   *   <li>a replica last seen stable (a success within {@link SoakCluster#FRESH}) so recently that its last
   *       success must lie within the renew deadline is ready; likewise live within the liveness budget;
   *   <li>a leader has had a successful Lease call within the renew deadline (+ margin);
   *   <li>at a stable point every replica is ready and live, and the leader's term is the one its running
   *       reconcilers were started with.
   * </ul>
   */
  private int checkHealth(List<Entry> log, int[] cutSamples) {
    int count = 0;
    long ready = settings.renewDeadline().toNanos();
    // A follower with an open watch reads once per lease duration, so it may stay ready that long (plus one
    // request timeout) without a call; a leader or a polling follower only the renew deadline.
    long readyAtMost = Math.max(ready, settings.leaseDuration().plus(settings.requestTimeout()).toNanos());
    long budget = settings.healthBudget().toNanos();
    long margin = HEALTH_MARGIN.toNanos();
    long fresh = SoakCluster.FRESH.toNanos();
    long slack = Duration.ofMillis(100).toNanos();
    for (HealthSample s : journal.samples()) {
      ElectionHealth h = s.health();
      if (s.cutForNanos() >= 0) {
        cutSamples[0] += s.sinceStableNanos() >= 0 && s.sinceStableNanos() + fresh <= ready - slack ? 1 : 0;
        cutSamples[1] += s.cutForNanos() >= readyAtMost + margin ? 1 : 0;
        cutSamples[2] += s.cutForNanos() >= budget + margin ? 1 : 0;
      }
      List<String> wrong = new ArrayList<>();
      ElectionState.Kind kind = h.state().kind();
      if (kind == ElectionState.Kind.STOPPED && h.ready()) {
        wrong.add("stopped but ready");
      }
      if (s.label().startsWith("right after close") && kind != ElectionState.Kind.STOPPED) {
        wrong.add("closed but " + kind);
      }
      if (s.cutForNanos() >= readyAtMost + margin && h.ready()) {
        wrong.add("ready though cut off for " + s.cutForNanos() / 1_000_000 + " ms");
      }
      long lastSuccessAtMost = s.sinceStableNanos() < 0 ? Long.MAX_VALUE : s.sinceStableNanos() + fresh;
      if (kind != ElectionState.Kind.STOPPED && lastSuccessAtMost <= ready - slack && !h.ready()) {
        wrong.add("not ready though it last succeeded at most " + lastSuccessAtMost / 1_000_000 + " ms ago");
      }
      if (s.cutForNanos() >= 0 && h.sinceLastLeaseSuccess().map(since -> since.toNanos() < s.cutForNanos() - slack)
          .orElse(false)) {
        wrong.add("reports a Lease success after it was cut off " + s.cutForNanos() / 1_000_000 + " ms ago");
      }
      if (s.cutForNanos() >= budget + margin && h.live()) {
        wrong.add("live though cut off for " + s.cutForNanos() / 1_000_000 + " ms");
      }
      if (lastSuccessAtMost <= budget - slack && !h.live()) {
        wrong.add("not live though it last succeeded at most " + lastSuccessAtMost / 1_000_000 + " ms ago");
      }
      if (kind == ElectionState.Kind.LEADING && !h.sinceLastLeaseSuccess()
          .map(since -> since.toNanos() <= ready + margin).orElse(false)) {
        wrong.add("leading without a successful Lease call for " + h.sinceLastLeaseSuccess());
      }
      if (s.stablePoint()) {
        if (!h.ready() || !h.live()) {
          wrong.add("not ready and live at a stable point");
        }
        if (h.state() instanceof ElectionState.Leading) {
          Optional<Entry> lastStart = log.stream().filter(e -> e.replica().equals(s.identity())
              && e.kind() == ServiceLog.Kind.START && e.nanos() - s.nanos() <= 0)
              .reduce((first, second) -> second);
          if (lastStart.isEmpty() || lastStart.get().term() != ((ElectionState.Leading) h.state()).term()) {
            wrong.add("leading with a term its reconcilers were not started with");
          }
        }
      }
      if (!wrong.isEmpty()) {
        count++;
        violations.add("HEALTH: " + s.identity() + " " + s.label() + " at " + journal.at(s.nanos()) + " ms: "
            + String.join("; ", wrong) + " (" + h + ")");
      }
    }
    return count;
  }

  private String around(List<LeaseWrite> writes, long from, long to) {
    return writes.stream().filter(w -> w.receivedNanos() - from >= 0 && to - w.receivedNanos() >= 0)
        .map(w -> journal.at(w.receivedNanos()) + "ms rv" + w.resourceVersion() + " holder=" + w.holder())
        .collect(Collectors.joining(", ", "[", "]"));
  }
}
