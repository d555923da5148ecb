package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.testsupport.LogCapture;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code start()} returns without waiting for the API server: the RBAC preflight and the first Lease calls run
 * on the election thread, and until the first call succeeds the runner is {@code STARTING}: not ready, live.
 */
class StartupTest {

  /** The documented bound on start(), with room for a loaded machine: one request timeout plus a second. */
  private static final Duration START_BOUND = LeaseSettings.builder().leaseName(MockApi.LEASE)
      .namespace(MockApi.NAMESPACE).identity("bound").leaseDuration(MockApi.LEASE_DURATION)
      .renewDeadline(MockApi.RENEW_DEADLINE).retryPeriod(MockApi.RETRY_PERIOD).build().requestTimeout()
      .plusSeconds(1);

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void startReturnsPromptlyAgainstAClosedPortInStateStarting() throws Exception {
    long before = System.nanoTime();
    try (Replica a = Replica.start("a", api.client(closedPortUrl()), MockApi.fastSettings("a").build(), log)) {
      Duration took = Duration.ofNanos(System.nanoTime() - before);

      assertThat(took).isLessThan(START_BOUND);
      ElectionHealth health = a.runner.health();
      assertThat(health.state()).isEqualTo(new ElectionState.Starting());
      assertThat(health.ready()).isFalse();
      assertThat(health.live()).as("within the health budget").isTrue();
      assertThat(health.sinceLastLeaseSuccess()).isEmpty();
      assertThat(a.runner.startupFailure()).isEmpty();
    }
    assertThat(log.entries()).isEmpty();
  }

  @Test
  void aRunnerWhoseLeaseCallsFailStaysStartingNotReadyAndLive() throws Exception {
    try (LogCapture logs = new LogCapture();
        ElectionRunner runner = ElectionRunner.builder()
            .client(api.client(closedPortUrl()))
            .decision(MockApi.CONTEND)
            .settings(MockApi.fastSettings("a").build())
            .service(log.service("a"))
            .rbacPreflight(false)
            .start()) {
      assertThat(Replica.awaitTrue(() -> logs.text().contains("get Lease failed: connection refused"),
          Duration.ofSeconds(5))).as("the first read failed").isTrue();

      ElectionHealth health = runner.health();
      assertThat(health.state()).isEqualTo(new ElectionState.Starting());
      assertThat(health.ready()).isFalse();
      assertThat(health.live()).isTrue();
    }
  }

  @Test
  void aStartThatFailedOnAMissingInputMayBeRetriedOnTheSameBuilder() throws Exception {
    ElectionRunner.Builder builder = ElectionRunner.builder().decision(MockApi.RUN_UNELECTED);
    assertThatThrownBy(builder::start).isInstanceOf(IllegalStateException.class).hasMessageContaining("no service");

    try (ElectionRunner runner = builder.service(log.service("a")).start()) {
      assertThat(runner.state().kind()).isEqualTo(ElectionState.Kind.NOT_CONTENDING);
    }
  }

  @Test
  void anUnelectedStartWhoseServiceFailedStartedARunnerSoTheBuilderCannotBeRetried() {
    RuntimeException failure = new RuntimeException("port 8443 in use");
    ElectionRunner.Builder builder = ElectionRunner.builder()
        .decision(MockApi.RUN_UNELECTED)
        .service(LeaderService.of(term -> {
          throw failure;
        }, () -> { }));
    assertThatThrownBy(builder::start).isInstanceOf(IllegalStateException.class).hasRootCause(failure);

    assertThatThrownBy(builder::start).isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("this builder already started a runner").hasMessageContaining("use a new builder");
  }

  private static String closedPortUrl() throws java.io.IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return "http://127.0.0.1:" + socket.getLocalPort() + "/";
    }
  }

  @Test
  void startReturnsPromptlyWhileThePreflightGetsNoAnswerAndCloseCutsThePreflightShort() throws Exception {
    io.github.electionpolicy.testkit.fabric8.ReplicaLink proxy = api.proxy();
    proxy.partition();
    long before = System.nanoTime();
    Replica a = Replica.start("a", api.client(proxy.url()), MockApi.fastSettings("a").build(), log);
    Duration took = Duration.ofNanos(System.nanoTime() - before);

    assertThat(took).isLessThan(START_BOUND);
    assertThat(a.runner.health().state()).isEqualTo(new ElectionState.Starting());
    assertThat(a.runner.health().ready()).isFalse();
    assertThat(a.runner.health().live()).isTrue();

    long closing = System.nanoTime();
    a.close();

    // A review waits up to 10 s for its answer; close() interrupts it instead.
    assertThat(Duration.ofNanos(System.nanoTime() - closing)).isLessThan(START_BOUND);
    assertThat(a.runner.awaitStopped(Duration.ofSeconds(2))).isTrue();
    assertThat(a.runner.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
    assertThat(a.runner.startupFailure()).isEmpty();
    assertThat(api.lease()).isNull();
  }

  @Test
  void listenersSeeStartingFirstAndThenTheRoleOnceTheServerAnswers() throws Exception {
    io.github.electionpolicy.testkit.fabric8.ReplicaLink proxy = api.proxy();
    proxy.partition();
    List<String> changes = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        changes.add(previous.kind() + "->" + current.kind());
      }
    };
    try (Replica a = Replica.start("a", api.client(proxy.url()), MockApi.fastSettings("a").build(), log,
        listener)) {
      assertThat(a.runner.state().kind()).isEqualTo(ElectionState.Kind.STARTING);

      proxy.heal();

      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(10))).isTrue();
      assertThat(a.runner.isReady()).isTrue();
      assertThat(Replica.awaitTrue(() -> !changes.isEmpty(), Duration.ofSeconds(2))).isTrue();
      // The first change leaves STARTING: to LEADING, or to FOLLOWING (no leader) first when a take sent across the
      // heal failed without naming a holder (LeaseElector.Events#following).
      assertThat(changes.get(0)).startsWith("STARTING->");
      assertThat(changes).anyMatch(change -> change.endsWith("->LEADING"));
    }
  }
}
