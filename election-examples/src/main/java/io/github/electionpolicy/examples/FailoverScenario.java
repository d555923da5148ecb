package io.github.electionpolicy.examples;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.fabric8.LeaseAccessDeniedException;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

/**
 * The demo's story, step by step: decide, start the replicas, find the leader, close it gracefully and time
 * the take-over, kill the next leader without release and time the crash take-over, shut down.
 *
 * <p>Not thread-safe: run once, from one thread.
 */
final class FailoverScenario {

  static final String LEASE_NAME = "election-demo";
  static final String EMBEDDED_NAMESPACE = "default";
  /** How long the toy reconcilers work between the steps, so their pass counts mean something. */
  private static final Duration PAUSE = Duration.ofMillis(500);
  /** Slack on every wait, for a busy machine; the waits are bounded by the Lease timings plus this. */
  private static final Duration SLACK = Duration.ofSeconds(5);
  /** How often the wait for the first leader looks for a replica the RBAC preflight stopped. */
  private static final Duration ELECTION_POLL = Duration.ofMillis(100);

  private final DemoOptions options;
  private final PrintStream out;
  private final LeadershipTimeline timeline = new LeadershipTimeline();
  private final List<DemoReplica> replicas = new ArrayList<>();

  FailoverScenario(DemoOptions options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  /** The Lease settings every replica shares, from the options; each replica adds its identity. */
  static LeaseSettings.Builder settings(DemoOptions options) {
    LeaseSettings.Builder settings = LeaseSettings.builder()
        .leaseName(LEASE_NAME)
        .leaseDuration(options.leaseDuration())
        .renewDeadline(options.renewDeadline())
        .retryPeriod(options.retryPeriod());
    options.namespace().ifPresent(settings::namespace);
    return settings;
  }

  void run() throws DemoFailedException, InterruptedException {
    out.println("election-policy demo: " + count(options.replicas()) + ", lease "
        + millis(options.leaseDuration()) + ", renew deadline " + millis(options.renewDeadline()) + ", retry period "
        + millis(options.retryPeriod()));
    // The same embedded Lease API that election-testkit-fabric8 gives tests: fabric8's mock API server in CRUD
    // mode on a loopback port, answering SelfSubjectAccessReviews, so the RBAC preflight runs for real.
    LeaseApi server = options.embedded()
        ? LeaseApi.builder().namespace(EMBEDDED_NAMESPACE).target(ApiServerTarget.embedded()).start()
        : null;
    try {
      ClusterConnection connection = server != null
          ? ClusterConnection.embedded(server.url(), EMBEDDED_NAMESPACE)
          : ClusterConnection.of(options.master(), options.kubeconfig());
      out.println("API server: " + connection.masterUrl() + (server != null
          ? " (embedded fabric8 mock server, CRUD mode)" : " (a real cluster: the Lease is really written)"));
      List<ElectionDecision> decisions = decide();
      long startNanos = System.nanoTime();
      start(decisions, connection);
      if (decisions.get(0).contends()) {
        elect(startNanos);
      } else {
        runUnelected();
      }
    } finally {
      shutDown(server);
    }
  }

  /** Each replica decides with the real policy in an environment of its own (only the kill switch). */
  private List<ElectionDecision> decide() {
    List<ElectionDecision> decisions = new ArrayList<>();
    Map<String, List<String>> replicasBySummary = new LinkedHashMap<>();
    for (int i = 1; i <= options.replicas(); i++) {
      ElectionDecision decision = ElectionPolicy.defaults().decide(options.replicaEnvironment(), options.substrate());
      decisions.add(decision);
      String name = replicaName(i);
      out.println(Demo.line(name, "decided " + decision.outcome() + " " + decision.reasons()));
      replicasBySummary.computeIfAbsent(decision.summary(), s -> new ArrayList<>()).add(name);
    }
    replicasBySummary.forEach((summary, names) ->
        out.println(Demo.wrapped(names.size() == 1 ? names.get(0) : "all", "summary: " + summary)));
    return decisions;
  }

  /** Starts the replicas at the same time, so any of them may win the Lease. */
  private void start(List<ElectionDecision> decisions, ClusterConnection connection)
      throws DemoFailedException, InterruptedException {
    ExecutorService starters = Executors.newFixedThreadPool(decisions.size());
    try {
      List<Future<DemoReplica>> started = new ArrayList<>();
      for (int i = 0; i < decisions.size(); i++) {
        String name = replicaName(i + 1);
        ElectionDecision decision = decisions.get(i);
        started.add(starters.submit(() ->
            DemoReplica.start(name, decision, settings(options), connection, timeline, out)));
      }
      DemoFailedException failure = null;
      for (Future<DemoReplica> replica : started) {
        try {
          replicas.add(replica.get());
        } catch (ExecutionException e) {
          failure = failure != null ? failure : startFailure(e.getCause());
        }
      }
      if (failure != null) {
        throw failure;
      }
    } finally {
      starters.shutdown();
    }
  }

  private static DemoFailedException startFailure(Throwable cause) {
    if (cause instanceof LeaseAccessDeniedException || cause instanceof InvalidElectionSettingException) {
      return new DemoFailedException(cause.getMessage(), cause);
    }
    if (cause instanceof KubernetesClientException) {
      return new DemoFailedException("the API server did not answer as expected: " + cause.getMessage()
          + "; check it with ExplainCluster", cause);
    }
    return new DemoFailedException("a replica could not start: " + cause, cause);
  }

  private void elect(long startNanos) throws DemoFailedException, InterruptedException {
    Duration bound = options.leaseDuration().multipliedBy(2).plus(SLACK);
    long deadline = System.nanoTime() + bound.toNanos();
    Optional<LeadershipTimeline.Elected> elected = Optional.empty();
    while (elected.isEmpty() && deadline - System.nanoTime() > 0) {
      // The RBAC preflight runs after start() returned: a denial stops the replicas, with the Role to apply.
      for (DemoReplica replica : replicas) {
        Optional<LeaseAccessDeniedException> denied = replica.startupFailure();
        if (denied.isPresent()) {
          throw new DemoFailedException(denied.get().getMessage(), denied.get());
        }
      }
      Duration slice = Duration.ofNanos(Math.min(ELECTION_POLL.toNanos(), Math.max(0, deadline - System.nanoTime())));
      elected = timeline.awaitElection(Optional.empty(), startNanos, slice);
    }
    LeadershipTimeline.Elected first = elected.orElseThrow(() -> new DemoFailedException("no replica became "
        + "leader within " + millis(bound) + "; check the API server and RBAC with ExplainCluster"));
    out.println(Demo.line(first.replica(), "LEADS: holds Lease " + replica(first).namespace() + "/"
        + LEASE_NAME + ", elected " + millisBetween(startNanos, first.nanos()) + " after start"));
    Thread.sleep(PAUSE.toMillis());
    if (replicas.size() < 2) {
      out.println("-- one replica: nobody to take over; run with --replicas 3 to see take-overs");
      return;
    }

    out.println("-- graceful: closing " + first.replica() + "; it stops its reconciler, then releases the Lease");
    long closeNanos = System.nanoTime();
    boolean released = replica(first).closeAndCheckRelease();
    Duration gracefulBound = options.renewDeadline().plus(options.leaseDuration()).plus(SLACK);
    LeadershipTimeline.Elected second = timeline.awaitElection(Optional.of(first.replica()), closeNanos,
        gracefulBound).orElseThrow(() -> new DemoFailedException("no replica took over within "
            + millis(gracefulBound) + " after " + first.replica() + " closed"));
    String graceful = millisBetween(closeNanos, second.nanos());
    out.println(Demo.line(second.replica(), "TOOK OVER " + graceful + " after the leader closed (graceful" + (released
        ? ")" : ", but its release got no answer in time, as from an overloaded API server: the Lease had to expire)")));
    Thread.sleep(PAUSE.toMillis());
    if (replicas.size() < 3) {
      out.println("-- two replicas: nobody left to take over a crash; run with --replicas 3 to see one");
      out.println("result: graceful take-over " + graceful);
      return;
    }

    out.println("-- crash: killing " + second.replica() + " without release (its connection to the API server "
        + "is cut)");
    long killNanos = System.nanoTime();
    replica(second).kill();
    Duration crashBound = options.leaseDuration().multipliedBy(2).plus(options.renewDeadline()).plus(SLACK);
    LeadershipTimeline.Elected third = timeline.awaitElection(Optional.of(second.replica()), killNanos,
        crashBound).orElseThrow(() -> new DemoFailedException("no replica took over within "
            + millis(crashBound) + " after " + second.replica() + " was killed"));
    String crash = millisBetween(killNanos, third.nanos());
    out.println(Demo.line(third.replica(), "TOOK OVER " + crash + " after the leader was killed (crash: the "
        + "Lease had to expire, lease duration " + millis(options.leaseDuration()) + ")"));
    Thread.sleep(PAUSE.toMillis());
    out.println("result: graceful take-over " + graceful + ", crash take-over " + crash);
  }

  private void runUnelected() throws InterruptedException {
    out.println(replicas.size() == 1
        ? "WARN: RUN_UNELECTED: " + replicas.get(0).name() + " runs its reconciler with no Lease; this is safe "
            + "only while it is the only replica"
        : "WARN: RUN_UNELECTED: all " + replicas.size() + " replicas run their reconcilers at the same time, "
            + "with no Lease; this is only safe with one replica");
    Thread.sleep(PAUSE.multipliedBy(2).toMillis());
  }

  private void shutDown(LeaseApi server) {
    out.println("-- shutting down: closing every replica (a leader releases the Lease)");
    // The leader first: once it has released, no Lease event is in flight while the followers close their
    // watches, which is when fabric8's mock server can stall (see docs/fabric8.md).
    Map<Boolean, List<DemoReplica>> byLeading = replicas.stream()
        .collect(Collectors.partitioningBy(DemoReplica::leads));
    List<DemoReplica> leadersFirst = new ArrayList<>(byLeading.get(true));
    leadersFirst.addAll(byLeading.get(false));
    for (DemoReplica replica : leadersFirst) {
      replica.close();
    }
    if (server != null) {
      try {
        server.close();
        out.println("stopped " + count(replicas.size()) + " and the embedded API server");
      } catch (IllegalStateException notClosed) {
        // The mock server waits for open connections; a killed replica's client may leave one behind.
        out.println("stopped " + count(replicas.size()) + "; the embedded API server did not close in time ("
            + notClosed.getMessage() + "); the JVM ends it on exit");
      }
    } else if (timeline.anyElection()) {
      out.println("stopped " + count(replicas.size()) + "; the released Lease " + LEASE_NAME
          + " stays in the cluster (kubectl delete lease " + LEASE_NAME + " removes it)");
    } else {
      out.println("stopped " + count(replicas.size()));
    }
  }

  private DemoReplica replica(LeadershipTimeline.Elected elected) {
    return replicas.stream().filter(r -> r.name().equals(elected.replica())).findFirst()
        .orElseThrow(() -> new IllegalStateException("unknown replica " + elected.replica()));
  }

  private static String count(int replicas) {
    return replicas == 1 ? "1 replica" : replicas + " replicas";
  }

  private static String replicaName(int index) {
    return "replica-" + index;
  }

  private static String millis(Duration duration) {
    return duration.toMillis() % 1000 == 0 ? duration.toSeconds() + "s" : duration.toMillis() + "ms";
  }

  private static String millisBetween(long fromNanos, long toNanos) {
    return Duration.ofNanos(toNanos - fromNanos).toMillis() + " ms";
  }
}
