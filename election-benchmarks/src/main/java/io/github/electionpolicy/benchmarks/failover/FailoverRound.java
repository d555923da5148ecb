package io.github.electionpolicy.benchmarks.failover;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.concurrent.TimeoutException;

/**
 * One round: start the replicas of one implementation on a fresh Lease, wait for a leader, let them run for
 * the settle time while the server counts their Lease requests (on the mock), then close or crash the leader and
 * wait for another replica to start its reconcilers. Every instant comes from the shared {@link EventLog}. Not
 * thread-safe: one round at a time.
 */
final class FailoverRound {

  private static final Duration TAKE_OVER_MARGIN = Duration.ofSeconds(20);
  /** How long to wait for the acquiring write to be recorded once the new leader started (a watch's delivery). */
  private static final Duration WRITE_SEEN_MARGIN = Duration.ofSeconds(10);

  private final ApiServer server;
  private final boolean countsRequests;
  private final EventLog log;
  private final ContenderFactory factory;
  private final Timings timings;
  private final Scenario scenario;
  private final int replicas;
  private final Duration settle;
  private final String roundId;

  FailoverRound(ApiServer server, boolean countsRequests, EventLog log, ContenderFactory factory, Timings timings,
      Scenario scenario, int replicas, Duration settle, String roundId) {
    this.server = server;
    this.countsRequests = countsRequests;
    this.log = log;
    this.factory = factory;
    this.timings = timings;
    this.scenario = scenario;
    this.replicas = replicas;
    this.settle = settle;
    this.roundId = roundId;
  }

  RoundResult run() throws InterruptedException, TimeoutException {
    String leaseName = "bench-" + roundId;
    Map<String, Contender> contenders = new LinkedHashMap<>();
    Map<String, KubernetesClient> clients = new LinkedHashMap<>();
    String leader = null;
    try {
      for (int i = 0; i < replicas; i++) {
        String identity = roundId + "-r" + i;
        KubernetesClient client = server.newClient(identity);
        clients.put(identity, client);
        ReplicaSpec spec = new ReplicaSpec(identity, server.namespace(), leaseName, timings, client,
            new ServiceRecorder(log, identity));
        contenders.put(identity, factory.create(spec));
      }
      int before = log.size();
      contenders.values().forEach(Contender::start);
      BenchEvent firstStart = log.awaitFirst(before,
          e -> e.kind() == EventKind.RECONCILERS_STARTED && contenders.containsKey(e.replica()),
          timings.leaseDuration().plus(TAKE_OVER_MARGIN));
      leader = firstStart.replica();
      Thread.sleep(settle.toMillis());

      int atAction = log.size();
      long action = log.record(scenario == Scenario.GRACEFUL ? EventKind.CLOSE_REQUESTED : EventKind.CRASHED,
          leader, scenario.name()).nanos();
      // Requests are counted from one retry period after the leader started, past the start-up burst.
      long windowStart = firstStart.nanos() + timings.retryPeriod().toNanos();
      Contender old = contenders.remove(leader);
      if (scenario == Scenario.GRACEFUL) {
        old.close();
      } else {
        // The crash instant: from here on nothing the old leader sends reaches the server.
        server.crash(List.of(leader));
        old.crash();
      }
      String oldLeader = leader;
      BenchEvent next = log.awaitFirst(atAction,
          e -> e.kind() == EventKind.RECONCILERS_STARTED && contenders.containsKey(e.replica()),
          timings.leaseDuration().plus(TAKE_OVER_MARGIN));

      OptionalLong sinceRenew = OptionalLong.empty();
      OptionalLong acquireSinceRenew = OptionalLong.empty();
      if (scenario == Scenario.CRASH) {
        // On a real server writes are recorded as a watch delivers them, possibly after the new leader started,
        // and the old leader's last renew may be recorded after the crash instant: so the acquiring write is
        // awaited, and the last renew is the old leader's last write recorded before it.
        BenchEvent acquire;
        try {
          acquire = log.awaitFirst(atAction,
              e -> e.kind() == EventKind.LEASE_WRITE_OK && contenders.containsKey(e.replica()), WRITE_SEEN_MARGIN);
        } catch (TimeoutException e) {
          throw new IllegalStateException("the server recorded no write from the new leader " + next.replica()
              + " within " + WRITE_SEEN_MARGIN + " of its reconcilers starting", e);
        }
        BenchEvent lastRenew = log.findLast(log.size(),
                e -> e.kind() == EventKind.LEASE_WRITE_OK && e.replica().equals(oldLeader)
                    && e.nanos() - acquire.nanos() < 0)
            .orElseThrow(() -> new IllegalStateException("the server recorded no write from leader " + oldLeader));
        sinceRenew = OptionalLong.of(next.nanos() - lastRenew.nanos());
        acquireSinceRenew = OptionalLong.of(acquire.nanos() - lastRenew.nanos());
      }
      OptionalDouble leaderRate = OptionalDouble.empty();
      OptionalDouble followerRate = OptionalDouble.empty();
      if (countsRequests) {
        double windowMinutes = (action - windowStart) / 60e9;
        leaderRate = OptionalDouble.of(requests(oldLeader, windowStart, action) / windowMinutes);
        followerRate = OptionalDouble.of(contenders.keySet().stream()
            .mapToLong(id -> requests(id, windowStart, action))
            .average()
            .orElse(0) / windowMinutes);
      }
      return new RoundResult(factory.name(), timings, scenario, next.nanos() - action, sinceRenew,
          acquireSinceRenew, leaderRate, followerRate);
    } finally {
      // Teardown is not measured: the remaining replicas are crashed, which is quick for both
      // implementations, where a graceful close against a refusing server waits out the client's retries.
      server.crash(List.copyOf(contenders.keySet()));
      contenders.values().forEach(FailoverRound::crashQuietly);
      clients.forEach((identity, client) -> {
        client.close();
        server.disconnect(identity);
      });
    }
  }

  private long requests(String replica, long from, long to) {
    return log.count(from, to, e -> e.kind() == EventKind.LEASE_REQUEST && e.replica().equals(replica));
  }

  private static void crashQuietly(Contender contender) {
    try {
      contender.crash();
    } catch (RuntimeException e) {
      // The round is over: a replica that fails to close cannot change what was measured.
      System.err.println("stopping a replica after the round failed: " + e);
    }
  }
}
