package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.github.electionpolicy.testsupport.LogCapture;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Two replicas contending, on a fresh mock API server, against whatever a test planted there first (a
 * Lease with garbage fields, an object of another kind or version), observed for a while: what ran, what
 * each replica reported, the Lease left behind and everything logged meanwhile.
 *
 * @param firstStartAfter how long after the replicas started the first reconciler started, if one did
 * @param states each replica's state at the end
 * @param ready each replica's readiness at the end
 * @param finalLease the v1 Lease at the end
 * @param logs everything logged while the replicas ran
 * @param overlap a description of two replicas running at once, if that happened
 * @param running the replicas whose reconcilers ran at the end, before the replicas were closed
 * @param leftBehind the coordination.k8s.io/v1beta1 object of the same name at the end, as status and body
 */
record LeaseContest(Optional<Duration> firstStartAfter, List<ElectionState> states, List<Boolean> ready,
    Lease finalLease, String logs, Optional<String> overlap, List<String> running, String leftBehind) {

  static LeaseContest against(Consumer<MockApi> plant, Duration observe) throws Exception {
    return against(plant, observe, Duration.ZERO);
  }

  /**
   * Like {@link #against(Consumer, Duration)}, but once both replicas have read the Lease their monotonic
   * clocks jump {@code jump} ahead: what a follower does after that much time, without waiting for it.
   */
  static LeaseContest against(Consumer<MockApi> plant, Duration observe, Duration jump) throws Exception {
    try (MockApi api = new MockApi().answeringAccessReviews()) {
      plant.accept(api);
      ServiceLog log = new ServiceLog();
      String logs;
      List<ElectionState> states = new ArrayList<>();
      List<Boolean> ready = new ArrayList<>();
      long started = System.nanoTime();
      java.util.concurrent.atomic.AtomicLong offset = new java.util.concurrent.atomic.AtomicLong();
      Lease finalLease;
      List<String> running;
      try (LogCapture capture = new LogCapture();
          Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log, offset::get);
          Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log, offset::get)) {
        if (!jump.isZero()) {
          Replica.awaitTrue(() -> a.runner.health().sinceLastLeaseSuccess().isPresent()
              && b.runner.health().sinceLastLeaseSuccess().isPresent(), observe);
          offset.addAndGet(jump.toNanos());
        }
        Replica.awaitTrue(() -> !log.running().isEmpty(), observe);
        // Must wait: the follower must see the new holder, and a second contender try its luck, for three retry
        // periods; a contest may end with no holder of ours writing at all (a planted Lease that is never ours),
        // so no event marks that time in every contest.
        Thread.sleep(MockApi.RETRY_PERIOD.toMillis() * 3);
        for (Replica r : List.of(a, b)) {
          states.add(r.runner.state());
          ready.add(r.runner.isReady());
        }
        running = log.running();
        finalLease = api.lease();
        logs = capture.text();
      }
      Optional<Duration> first = log.entries().stream().filter(e -> e.kind() == ServiceLog.Kind.START)
          .findFirst().map(e -> Duration.ofNanos(e.nanos() - started));
      String left = http(api, "GET", "apis/coordination.k8s.io/v1beta1/namespaces/" + MockApi.NAMESPACE
          + "/leases/" + MockApi.LEASE, null);
      return new LeaseContest(first, states, ready, finalLease, logs, log.overlap(), running, left);
    }
  }

  void assertExactlyOneLeaderFollowedByTheOther() {
    assertThat(overlap).isEmpty();
    assertThat(states).filteredOn(s -> s.kind() == ElectionState.Kind.LEADING).hasSize(1);
    String leader = ((ElectionState.Leading) states.stream().filter(s -> s instanceof ElectionState.Leading)
        .findFirst().orElseThrow()).term().holderIdentity();
    assertThat(states).contains(new ElectionState.Following(Optional.of(leader)));
    assertThat(running).containsExactly(leader);
    assertThat(finalLease.getSpec().getHolderIdentity()).isEqualTo(leader);
  }

  static void create(MockApi api, Lease lease) {
    api.client().leases().inNamespace(MockApi.NAMESPACE).resource(lease).create();
  }

  /** A raw request through a proxy of the fixture's, which its tear-down cuts. */
  static String http(MockApi api, String method, String path, String json) {
    try {
      HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(api.proxy().url() + path))
          .timeout(Duration.ofSeconds(5)).header("Content-Type", "application/json");
      request.method(method, json == null ? HttpRequest.BodyPublishers.noBody()
          : HttpRequest.BodyPublishers.ofString(json));
      HttpResponse<String> response = HttpClient.newHttpClient().send(request.build(),
          HttpResponse.BodyHandlers.ofString());
      return response.statusCode() + " " + response.body();
    } catch (Exception e) {
      throw new IllegalStateException(method + " " + path + " failed", e);
    }
  }
}
