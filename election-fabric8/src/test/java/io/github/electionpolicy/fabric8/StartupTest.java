package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.testsupport.LogCapture;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
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
      // heal failed without naming a holder (ElectorSignals#following).
      assertThat(changes.get(0)).startsWith("STARTING->");
      assertThat(changes).anyMatch(change -> change.endsWith("->LEADING"));
    }
  }

  // ---- finding 3 of the review of the start-up, settings and health changes --------------------------

  /**
   * Attack: the thread calling start() for an unelected runner is interrupted while a service's start() runs
   * (a shutdown, an executor cancelling a start-up task). ServiceControl.startNow turns the interrupt into an
   * IllegalStateException, begin() calls shutDownAfterFailedStart() and start() throws, so the caller holds no
   * runner to close. But the start task was not cancelled: it finishes on the reconciler thread, the service
   * runs on under an unelected term that is never ended (nobody can end it any more), and it is never stopped.
   * A caller that retries start() (the natural reaction to an exception) then runs the services twice.
   *
   * <p>Fix: in begin()'s failure path end unelectedTerm (so startAll stops what it started: TERM_ENDED) and
   * queue a stop behind the start (control.stopAndWait or submit a stop before shutdown()).
   */
  @Test
  void anUnelectedStartThatThrowsLeavesNoServiceRunning() throws Exception {
    CountDownLatch inStart = new CountDownLatch(1);
    CountDownLatch letStartReturn = new CountDownLatch(1);
    AtomicReference<LeadershipTerm> term = new AtomicReference<>();
    AtomicBoolean stopped = new AtomicBoolean();
    LeaderService slowToStart = new LeaderService() {
      @Override
      public void start(LeadershipTerm t) throws Exception {
        term.set(t);
        inStart.countDown();
        letStartReturn.await();
      }

      @Override
      public void stop() {
        stopped.set(true);
      }
    };
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<ElectionRunner> returned = new AtomicReference<>();
    AtomicBoolean interruptKept = new AtomicBoolean();
    Thread caller = new Thread(() -> {
      try {
        returned.set(ElectionRunner.builder().decision(MockApi.RUN_UNELECTED).service(slowToStart).start());
        interruptKept.set(Thread.currentThread().isInterrupted());
      } catch (Throwable t) {
        thrown.set(t);
      }
    });
    caller.start();
    assertThat(inStart.await(5, TimeUnit.SECONDS)).isTrue();
    caller.interrupt();
    // The fix: start() waits for the start it queued whatever interrupts come, and returns the runner (keeping
    // the interrupt for the caller), so the caller can always close what it started.
    letStartReturn.countDown();
    caller.join(5000);

    assertThat(thrown.get()).as("start() does not throw for an interrupt").isNull();
    assertThat(returned.get()).as("start() returns the runner, so the caller can close it").isNotNull();
    returned.get().close();
    assertThat(stopped.get()).as("closing it stops the service").isTrue();
    assertThat(term.get().isValid()).isFalse();
    assertThat(interruptKept.get()).as("the caller's interrupt is kept").isTrue();
  }

  // ---- finding 11 of the review of the start-up, settings and health changes -------------------------

  /**
   * Attack: Builder.start() sets started=true before it constructs the runner, and the constructor is where the
   * namespace is resolved and checked. A bad namespace (here from the service-account file) throws the right
   * InvalidElectionSettingException; the user fixes the settings on the same builder and calls start() again,
   * and is told "this builder already started a runner: two runners from one builder would contend under the
   * same identity" although no runner was ever started. The message names a cause that does not exist.
   *
   * <p>Fix: set started only once the constructor returned (or catch, reset and rethrow), or word the message
   * as "start() was already called on this builder".
   */
  @Test
  void aStartThatFailedOnABadNamespaceDoesNotClaimARunnerStarted() throws Exception {
    java.nio.file.Path file = java.nio.file.Files.createTempFile("namespace", "");
    java.nio.file.Files.writeString(file, "Not_A_Namespace");
    LeaseSettings bad = LeaseSettings.builder().leaseName(MockApi.LEASE).identity("a")
        .serviceAccountNamespaceFile(file).lossPolicy(LossPolicy.recontend()).build();
    ElectionRunner.Builder builder = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(bad)
        .service(log.service("a"));
    assertThat(catchThrowable(builder::start)).isInstanceOf(InvalidElectionSettingException.class)
        .hasMessageContaining("Not_A_Namespace");

    builder.settings(MockApi.fastSettings("a").build());
    Throwable again = catchThrowable(() -> builder.start().close());

    if (again != null) {
      assertThat(again).as("no runner was started by this builder")
          .hasMessageNotContaining("already started a runner");
    }
  }
}
