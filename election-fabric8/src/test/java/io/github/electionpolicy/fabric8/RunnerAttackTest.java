package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Adversarial review of the start-up, settings and health changes (asynchronous RBAC preflight, STARTING,
 * LEADER_ONLY readiness, Immutables settings, identity at start, sealed LossPolicy). Each test names the
 * behaviour that should hold; each failed on main when written and is disabled with its finding number.
 */
class RunnerAttackTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  // ---- FINDING 1 --------------------------------------------------------------------------------------

  /**
   * Attack: stopTimeout is only checked to be positive, so the idiom for "wait for my reconcilers as long as
   * they need" ({@code ChronoUnit.FOREVER.getDuration()}, {@code Duration.ofMillis(Long.MAX_VALUE)}) is
   * accepted. close() then calls {@code ServiceControl.stopAndWait}, whose {@code timeout.toNanos()} overflows:
   * close() throws ArithmeticException after setting closing=true and submitting the stop, but before
   * {@code elector.finish(...)}. The Lease loop, told only to stop acquiring, keeps RENEWING the Lease for
   * ever: the reconcilers are stopped, no other replica can ever take over (the controller is dead
   * cluster-wide while this process lives), awaitStopped() never returns, and a second close() is a no-op.
   * The same overflow in LossReaction.exit() kills the loop after a loss under EXIT before the exiter runs.
   *
   * <p>Fix: reject a stopTimeout whose nanoseconds overflow in SettingsChecks.stopTimeout (naming it), or
   * saturate the deadline arithmetic (e.g. a helper that caps toNanos at Long.MAX_VALUE / 2).
   */
  @Test
  void closeReleasesTheLeaseWhateverStopTimeoutTheSettingsAccept() throws Exception {
    LeaseSettings settings;
    try {
      settings = MockApi.fastSettings("a").stopTimeout(Duration.ofMillis(Long.MAX_VALUE)).build();
    } catch (InvalidElectionSettingException rejected) {
      // Also a fix: fail loudly at build, naming the setting.
      assertThat(rejected).hasMessageContaining("stopTimeout");
      return;
    }
    Replica a = Replica.startLeader("a", api.client(), settings, log);
    try {
      Throwable thrown = catchThrowable(a.runner::close);

      assertThat(thrown).as("close() must not throw").isNull();
      assertThat(a.runner.awaitStopped(Duration.ofSeconds(5))).as("the runner stops").isTrue();
      assertThat(api.lease().getSpec().getHolderIdentity()).as("the Lease is released").isNullOrEmpty();
    } finally {
      a.runner.crashForTest();
    }
  }

  // ---- FINDING 2 --------------------------------------------------------------------------------------

  /**
   * Attack: a follower with an open watch reads the Lease only once per leaseDuration (commit 351ba10), and
   * liveness is "a Lease call succeeded within healthBudget". The settings only require healthBudget >=
   * renewDeadline, so any healthBudget in [renewDeadline, leaseDuration + request time) is accepted although
   * a perfectly healthy watching follower then reports NOT live for part of every lease duration: the kubelet
   * restarts healthy followers over and over. The easiest way to get there is the documented toBuilder(): it
   * copies the derived default healthBudget (25 s for the defaults), so {@code
   * defaults.toBuilder().leaseDuration(30s).renewDeadline(20s)} builds fine and its followers flap to not live.
   *
   * <p>Fix: require healthBudget >= leaseDuration + requestTimeout (what a watching follower needs; the
   * default already satisfies it) in SettingsChecks.healthBudget, or count a watch event as contact.
   */
  @Test
  void aHealthyWatchingFollowerStaysLiveUnderEveryAcceptedHealthBudget() throws Exception {
    LeaseSettings.Builder b = MockApi.fastSettings("b").leaseDuration(Duration.ofSeconds(3))
        .healthBudget(Duration.ofMillis(1600));   // >= renewDeadline (1.5 s): accepted
    LeaseSettings followerSettings;
    try {
      followerSettings = b.build();
    } catch (InvalidElectionSettingException rejected) {
      assertThat(rejected).hasMessageContaining("healthBudget");
      return;
    }
    LeaseSettings leaderSettings = MockApi.fastSettings("a").leaseDuration(Duration.ofSeconds(3)).build();
    try (Replica a = Replica.startLeader("a", api.client(), leaderSettings, log);
        Replica follower = Replica.start("b", api.client(), followerSettings, log)) {
      assertThat(Replica.awaitTrue(
          () -> follower.runner.state().equals(new ElectionState.Following(Optional.of("a")))
              && follower.runner.isReady(), Duration.ofSeconds(5))).isTrue();

      List<String> notLive = new ArrayList<>();
      long end = System.nanoTime() + Duration.ofSeconds(7).toNanos();
      while (System.nanoTime() < end) {
        ElectionHealth h = follower.runner.health();
        if (!h.live() && h.state().kind() == ElectionState.Kind.FOLLOWING) {
          notLive.add("not live while following and ready=" + h.ready() + ", since last success "
              + h.sinceLastLeaseSuccess().map(Duration::toMillis).orElse(-1L) + " ms");
        }
        Thread.sleep(20);
      }
      assertThat(a.leads()).as("nothing went wrong: the leader still leads").isTrue();
      assertThat(notLive).as("a healthy follower, in touch through its watch, must stay live").isEmpty();
    }
  }

  // ---- FINDING 3 --------------------------------------------------------------------------------------

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

  // ---- FINDING 4 --------------------------------------------------------------------------------------

  /**
   * Attack: Readiness.LEADER_ONLY exists "for a Service that must route to the leader" (a webhook, an API served
   * by the leader's LeaderService). health() calls a contending runner ready as soon as the state is LEADING,
   * and LEADING is published before the services are even submitted (startLater runs them on the reconciler
   * thread). So the leader is ready, and gets the traffic, while its service's start() is still running (a
   * server not yet bound, caches not warm) and also while a start() that will fail runs. The unelected runner
   * does wait for its services (control.started()); the elected one does not.
   *
   * <p>Fix: under LEADER_ONLY (at least) require control.started() for the current term, as the unelected
   * branch does.
   */
  @Test
  void leaderOnlyReadinessWaitsUntilTheLeadersServicesStarted() throws Exception {
    CountDownLatch inStart = new CountDownLatch(1);
    CountDownLatch letStartReturn = new CountDownLatch(1);
    LeaderService webhookServer = LeaderService.of(term -> {
      inStart.countDown();
      try {
        letStartReturn.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, () -> { });
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(webhookServer)
        .readiness(Readiness.LEADER_ONLY)
        .start();
    try {
      assertThat(inStart.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(runner.state().kind()).isEqualTo(ElectionState.Kind.LEADING);

      assertThat(runner.health().ready()).as("ready while the leader's only service is still starting").isFalse();
    } finally {
      letStartReturn.countDown();
      runner.close();
    }
  }

  // ---- FINDING 5 --------------------------------------------------------------------------------------

  /**
   * Attack: close() ends the term at once and then stops the services (up to stopTimeout) and releases; the
   * state stays LEADING until the very end of stopThenRelease, and the leader keeps renewing meanwhile, so under
   * LEADER_ONLY the closing leader stays ready (traffic keeps coming) while its services are stopping or
   * stopped under an ended term. The same rule keeps it ready after its release was written, until STOPPED is
   * published: a new leader that is elected in that window (any stall of the closing thread between the release
   * and STOPPED) makes two replicas ready at once under LEADER_ONLY.
   *
   * <p>Fix: health() is not ready once the runner is closing (or once the current term has ended), whatever the
   * state; or publish a non-leading state when close() ends the term.
   */
  @Test
  void aClosingLeaderIsNotReadyOnceItsTermEnded() throws Exception {
    CountDownLatch inStop = new CountDownLatch(1);
    CountDownLatch letStopReturn = new CountDownLatch(1);
    AtomicReference<LeadershipTerm> term = new AtomicReference<>();
    LeaderService webhookServer = LeaderService.of(term::set, () -> {
      inStop.countDown();
      try {
        letStopReturn.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").stopTimeout(Duration.ofSeconds(5)).build())
        .service(webhookServer)
        .readiness(Readiness.LEADER_ONLY)
        .start();
    Thread closer = new Thread(runner::close);
    try {
      assertThat(Replica.awaitTrue(() -> term.get() != null, Duration.ofSeconds(5))).isTrue();
      closer.start();
      assertThat(inStop.await(5, TimeUnit.SECONDS)).isTrue();
      Thread.sleep(MockApi.RETRY_PERIOD.toMillis() * 2);   // the closing leader renews meanwhile

      assertThat(term.get().isValid()).isFalse();
      assertThat(runner.health().ready()).as("ready although closing, its term ended and its service stopping")
          .isFalse();
    } finally {
      letStopReturn.countDown();
      closer.join(10_000);
    }
  }

  // ---- FINDING 6 --------------------------------------------------------------------------------------

  /**
   * Attack: the docs promise every setting fails in build() with an InvalidElectionSettingException naming it.
   * With Immutables the derived defaults (healthBudget = leaseDuration + renewDeadline, stopTimeout =
   * leaseDuration - renewDeadline) are computed in the generated constructor BEFORE @Value.Check runs the
   * checks, so a huge duration (Duration.ofSeconds(Long.MAX_VALUE), ChronoUnit.FOREVER.getDuration(): "never
   * expire" in a test) escapes as a bare {@code ArithmeticException: long overflow} that names no setting and
   * says nothing of how to fix it; the leaseDuration check (at most Integer.MAX_VALUE seconds) never runs.
   *
   * <p>Fix: compute the derived defaults with saturating arithmetic (or check the raw inputs in the defaults),
   * so the checks get to run and name leaseDuration / renewDeadline.
   */
  @Test
  void aHugeDurationFailsNamingTheSetting() {
    Throwable lease = catchThrowable(() -> LeaseSettings.builder().leaseName("orders")
        .leaseDuration(Duration.ofSeconds(Long.MAX_VALUE)).build());
    Throwable deadline = catchThrowable(() -> LeaseSettings.builder().leaseName("orders")
        .renewDeadline(Duration.ofSeconds(Long.MAX_VALUE)).build());

    assertThat(lease).isInstanceOf(InvalidElectionSettingException.class).hasMessageContaining("leaseDuration");
    assertThat(deadline).isInstanceOf(InvalidElectionSettingException.class).hasMessageContaining("renewDeadline");
  }

  // ---- FINDING 7 --------------------------------------------------------------------------------------

  /**
   * Attack: awaitStopped() documents that it may be called "from one of the runner's own threads (a reconciler,
   * listener, loss handler or exiter)". An exiter is exactly where one would wait for the runner to be done
   * before ending the process. But under EXIT the exiter runs BEFORE the runner reports STOPPED (LossReaction
   * startFailed/exit: "Exit before reporting STOPPED"), on the election thread that would report it: the
   * exiter's awaitStopped() waits on a latch only it can release. The untimed awaitStopped() deadlocks the
   * election thread for ever: the runner never reaches STOPPED, the process never exits after the RBAC denial.
   * (The same holds for a custom LossHandler calling awaitStopped() before returning STOP.)
   *
   * <p>Fix: count the stopped latch down (or make awaitStopped return at once) when called on the election
   * thread; or stop documenting exiters and loss handlers as callers.
   */
  @Test
  void awaitStoppedFromTheExiterReturnsAfterAPreflightDenial() throws Exception {
    api.denying(Set.of("update"));
    AtomicReference<ElectionRunner> runner = new AtomicReference<>();
    CountDownLatch runnerKnown = new CountDownLatch(1);
    List<Boolean> stoppedSeenByExiter = new CopyOnWriteArrayList<>();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(status -> {
      try {
        runnerKnown.await(5, TimeUnit.SECONDS);
        // On the election thread it returns at once (the runner stops once this exiter returns): before the
        // fix it waited for itself, and the untimed awaitStopped() never returned.
        long before = System.nanoTime();
        runner.get().awaitStopped();
        boolean stoppedYet = runner.get().awaitStopped(Duration.ofSeconds(3));
        stoppedSeenByExiter.add(!stoppedYet && System.nanoTime() - before < Duration.ofSeconds(1).toNanos());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    })).build();

    try (Replica a = Replica.start("a", api.client(), settings, log)) {
      runner.set(a.runner);
      runnerKnown.countDown();
      assertThat(a.runner.awaitStopped(Duration.ofSeconds(10))).isTrue();

      assertThat(stoppedSeenByExiter).containsExactly(true);
    }
  }

  // ---- FINDING 8 --------------------------------------------------------------------------------------

  /**
   * Attack (finding 8 of the old runner): close() "never triggers the loss policy", yet a close() that began
   * while the preflight's denial was being acted on still got the EXIT. With one loop owning the state, the
   * loop's order decides: a close() taken in before the denial stops the runner as CLOSED, with no exit and no
   * startup failure, whatever the denial says once it arrives (here it is held back until close() returned).
   */
  @Test
  void aCloseTakenInBeforeTheDenialIsNotAnExit() throws Exception {
    api.denying(Set.of("update"));
    List<Integer> exits = new CopyOnWriteArrayList<>();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(exits::add)).build();
    CountDownLatch denialHeld = new CountDownLatch(1);
    AtomicReference<Runnable> deliver = new AtomicReference<>();
    LeaseTransport holdingTheDenial = new ForwardingTransport(new Fabric8LeaseTransport(api.client(),
        MockApi.NAMESPACE, settings, SharedPools.io())) {
      @Override
      public Call preflight(java.util.function.Consumer<java.util.Optional<LeaseAccessDeniedException>> done,
          java.util.function.Consumer<Throwable> failed) {
        return super.preflight(denied -> {
          deliver.set(() -> done.accept(denied));
          denialHeld.countDown();
        }, failed);
      }
    };
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .transport(holdingTheDenial)
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(log.service("a"))
        .start();
    assertThat(denialHeld.await(5, TimeUnit.SECONDS)).isTrue();

    a.close();
    deliver.get().run();

    assertThat(a.awaitStopped(Duration.ofSeconds(5))).isTrue();
    assertThat(exits).as("closing is not a loss").isEmpty();
    assertThat(a.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
    assertThat(a.startupFailure()).as("the close, not the denial, stopped the runner").isEmpty();
  }

  /**
   * The other order of the same race: the loop took the denial in first (its ERROR line is being written, stalled
   * here as a blocked stderr pipe would stall it, on the runner's log lane) when another thread calls close(). The exit was decided
   * before the close: it happens once, the runner stops as ACCESS_DENIED, and the close() returns.
   */
  @Test
  void aCloseThatArrivesAfterTheDenialWasTakenInEndsTheRunnerAsDenied() throws Exception {
    api.denying(Set.of("update"));
    List<Integer> exits = new CopyOnWriteArrayList<>();
    AtomicReference<ElectionRunner> runner = new AtomicReference<>();
    CountDownLatch runnerKnown = new CountDownLatch(1);
    AtomicBoolean closeStarted = new AtomicBoolean();
    List<Thread> closers = new CopyOnWriteArrayList<>();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(exits::add)).build();

    PrintStream original = System.err;
    StallingErr stalling = new StallingErr(original, "Not contending for Lease", () -> {
      // On the log lane, inside the ERROR line's write: the runner is closed from elsewhere meanwhile.
      if (closeStarted.compareAndSet(false, true)) {
        try {
          runnerKnown.await(5, TimeUnit.SECONDS);
          Thread closer = new Thread(runner.get()::close, "closer");
          closers.add(closer);
          closer.start();
          Thread.sleep(200);   // lets close() ask; its input waits behind the one being handled
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return null;
    });
    System.setErr(new PrintStream(stalling, true, StandardCharsets.UTF_8));
    try {
      ElectionRunner a = ElectionRunner.builder()
          .client(api.client())
          .decision(MockApi.CONTEND)
          .settings(settings)
          .service(log.service("a"))
          .start();
      runner.set(a);
      runnerKnown.countDown();
      assertThat(a.awaitStopped(Duration.ofSeconds(10))).isTrue();
      for (Thread closer : closers) {
        closer.join(10_000);
        assertThat(closer.isAlive()).as("close() returned").isFalse();
      }

      assertThat(closeStarted).as("the stall ran").isTrue();
      // The close stopped the runner while the exiter was on its way: it does not wait for an exiter, which may be
      // System.exit() running the very hook that closes.
      assertThat(Replica.awaitTrue(() -> !exits.isEmpty(), Duration.ofSeconds(5))).isTrue();
      assertThat(exits).as("decided before the close came").containsExactly(LossPolicy.LOSS_EXIT_STATUS);
      assertThat(a.isClosed()).isTrue();
      assertThat(a.startupFailure()).isPresent();
    } finally {
      System.setErr(original);
    }
  }

  /** A System.err that runs {@code onMatch} on the writing thread when a write contains {@code marker}. */
  private static final class StallingErr extends OutputStream {
    private final PrintStream original;
    private final String marker;
    private final Supplier<Void> onMatch;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();

    StallingErr(PrintStream original, String marker, Supplier<Void> onMatch) {
      this.original = original;
      this.marker = marker;
      this.onMatch = onMatch;
    }

    @Override
    public void write(int b) {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) {
      original.write(b, off, len);
      boolean matched;
      synchronized (line) {
        line.write(b, off, len);
        matched = line.toString(StandardCharsets.UTF_8).contains(marker);
        if (matched || line.size() > 100_000) {
          line.reset();
        }
      }
      if (matched) {
        onMatch.get();
      }
    }
  }

  // ---- FINDING 9 --------------------------------------------------------------------------------------

  /**
   * Attack: toBuilder() copies the derived defaults (documented). Change the timings on a toBuilder() of the
   * defaults and build() fails on a setting the user never set, with a fix that cannot be applied: for
   * healthBudget "leave the default (leaseDuration + renewDeadline) or raise healthBudget" (they did leave it;
   * the 25 s came from the copy), for requestTimeout "pass ... none for half of renewDeadline" (a builder from
   * toBuilder() has no way to pass "none"). "Bad configuration fails loudly with a message that says what to
   * fix": here the message says the wrong thing.
   *
   * <p>Fix: let the derived defaults follow the timings on toBuilder() (copy only the attributes that were set
   * explicitly: Immutables can track that with a non-default @Value.Default bit, or keep the raw Optionals), or
   * at least say in the message that the value was copied by toBuilder() and must be set explicitly.
   */
  @Test
  void toBuilderWithNewTimingsBuildsOrNamesAFixThatCanBeApplied() {
    LeaseSettings defaults = LeaseSettings.builder().leaseName("orders").build();

    Throwable slower = catchThrowable(() -> defaults.toBuilder()
        .leaseDuration(Duration.ofSeconds(60)).renewDeadline(Duration.ofSeconds(40)).retryPeriod(Duration.ofSeconds(5))
        .build());
    Throwable faster = catchThrowable(() -> defaults.toBuilder()
        .leaseDuration(Duration.ofSeconds(4)).renewDeadline(Duration.ofSeconds(3)).retryPeriod(Duration.ofSeconds(1))
        .build());

    if (slower != null) {
      assertThat(slower).as("healthBudget was never set: 'leave the default' is what the user did")
          .hasMessageNotContaining("leave the default");
    }
    if (faster != null) {
      assertThat(faster).as("a toBuilder() builder cannot pass 'none'")
          .hasMessageNotContaining("or none for half of renewDeadline");
    }
  }

  // ---- FINDING 10 -------------------------------------------------------------------------------------

  /**
   * Attack: close the runner while its Lease watch is still being opened (a slow API server: the watch's
   * handshake takes a couple of seconds). LeaseWatch.stop() then finds the watch Future not done and only
   * cancel(true)s it: the worker is interrupted out of fabric8's watch(), but fabric8's WatchConnectionManager
   * is not closed by that interrupt; its handshake completes afterwards and nobody ever closes the Watch. The
   * runner's client was derived with watchReconnectLimit(-1), so this orphan watch lives on the user's client
   * for ever after close(): it holds a connection and reconnects after every drop, a request stream from a
   * runner that reports STOPPED (and one more orphan per runner a long-lived process closes this way).
   *
   * <p>Fix: in LeaseWatch.stop(), when the Future is not done, do not just cancel it: mark the generation
   * stopped and let the worker close the Watch it gets (e.g. the submitted task checks, after watch() returns,
   * whether its generation is still current and closes the Watch if not); or open the watch with
   * submitWatch() and close the manager on stop.
   */
  @Test
  void aRunnerClosedWhileItsWatchOpensLeavesNoWatchBehind() throws Exception {
    AtomicBoolean delayed = new AtomicBoolean();
    java.util.concurrent.atomic.AtomicLong closedAt = new java.util.concurrent.atomic.AtomicLong();
    List<String> afterClose = new CopyOnWriteArrayList<>();
    CountDownLatch watchArrived = new CountDownLatch(1);
    try (MockApi slow = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (closedAt.get() != 0) {
          afterClose.add(request.getMethod() + " " + path);
        }
        if (path.contains("watch=true") && delayed.compareAndSet(false, true)) {
          watchArrived.countDown();
          try {
            Thread.sleep(2000);   // the first watch's handshake takes 2 s
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
        return delegate.dispatch(request);
      }
    })) {
      ReplicaLink link = slow.fixture.replica("z");
      ElectionRunner runner = ElectionRunner.builder()
          .client(link.client())
          .decision(MockApi.CONTEND)
          .settings(MockApi.fastSettings("z").build())
          .service(log.service("z"))
          .rbacPreflight(false)
          .start();
      assertThat(watchArrived.await(5, TimeUnit.SECONDS)).isTrue();
      Thread.sleep(300);

      runner.close();
      assertThat(runner.awaitStopped(Duration.ofSeconds(5))).isTrue();
      Thread.sleep(2500);   // the delayed handshake has completed by now
      closedAt.set(System.nanoTime());

      int before = link.requestCount();
      link.refuseConnections();
      Thread.sleep(300);
      link.heal();
      Thread.sleep(2500);

      assertThat(link.requestCount() - before).as("requests sent by a runner that was closed and stopped: %s",
          afterClose).isZero();
    }
  }

  // ---- FINDING 11 -------------------------------------------------------------------------------------

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
