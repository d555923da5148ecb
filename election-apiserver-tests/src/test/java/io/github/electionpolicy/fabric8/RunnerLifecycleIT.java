package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The runner of one shared loop (RunnerLifecycle on LifecycleDriver) on the real server: how it stops
 * ({@link ElectionState.Stopped#cause()}), a hung {@code stop()} under {@code RECONTEND}, and how long it takes
 * to lead and to hand over (printed as {@code MEASURED}, not asserted: the figures depend on the machine's load).
 */
class RunnerLifecycleIT {

  static final String LEASE = MockApi.LEASE;
  private static final int ROUNDS = Integer.getInteger("election.it.rounds", 5);
  // As many as the shared I/O pool had threads when this was found (eight, fixed): each held one for good.
  private static final int CUT_OFF_RUNNERS = 8;

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();
  private final ServiceLog log = new ServiceLog();

  LeaseSettings.Builder settings(String identity) {
    return MockApi.fastSettings(identity).namespace(api.namespace());
  }

  /** A close stops the runner with cause CLOSED, releases the Lease, and leaves it not contending. */
  @Test
  void aClosedRunnerIsStoppedWithCauseClosedAndHasReleasedTheLease() throws Exception {
    Replica a = Replica.startLeader("a", api.replica("a").client(), settings("a").build(), log);
    a.close();

    assertThat(a.runner.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
    assertThat(a.runner.awaitStopped(Duration.ofSeconds(5))).isTrue();
    assertThat(api.lease(LEASE).orElseThrow().getSpec().getHolderIdentity()).isNullOrEmpty();
    assertThat(log.running()).isEmpty();
  }

  /**
   * Under RECONTEND a partitioned leader whose {@code stop()} never returns: its term ends at the renew deadline,
   * the runner stops for good once {@code stopTimeout} is over (STOPPED, cause LOST; not live), the other replica
   * takes over only after the Lease expired, and the stopped runner never writes the Lease again, not even once
   * the partition heals.
   */
  @Test
  void underRecontendAPartitionedLeaderWhoseStopHangsStopsAsLostAfterTheStopTimeout() throws Exception {
    CountDownLatch stopEntered = new CountDownLatch(1);
    CountDownLatch stopRelease = new CountDownLatch(1);
    List<ElectionState> states = new CopyOnWriteArrayList<>();
    ReplicaLink linkA = api.replica("a");
    Duration stopTimeout = Duration.ofSeconds(1);
    ElectionRunner a = ElectionRunner.builder()
        .client(linkA.client())
        .decision(MockApi.CONTEND)
        .settings(settings("a").stopTimeout(stopTimeout).build())
        .service(new LeaderService() {
          @Override
          public void start(LeadershipTerm term) {}

          @Override
          public void stop() throws InterruptedException {
            stopEntered.countDown();
            stopRelease.await();
          }
        })
        .listener(new ElectionListener() {
          @Override
          public void stateChanged(ElectionState previous, ElectionState current) {
            states.add(current);
          }
        })
        .start();
    // a leads before b starts: started together, either may win the empty Lease.
    assertThat(Replica.awaitTrue(() -> a.state().kind() == ElectionState.Kind.LEADING, Duration.ofSeconds(10)))
        .as("a leads: %s", a.state()).isTrue();
    try (Replica b = Replica.start("b", api.replica("b").client(), settings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
          Duration.ofSeconds(10))).isTrue();

      long cut = System.nanoTime();
      linkA.partition();
      assertThat(stopEntered.await(10, TimeUnit.SECONDS)).as("a's term ends; its stop() is called").isTrue();
      long stopCalled = System.nanoTime();
      assertThat(a.awaitStopped(Duration.ofSeconds(10))).as("a stops for good while its stop() hangs").isTrue();
      long stopped = System.nanoTime();
      System.out.println("MEASURED real server, hung stop under RECONTEND: stop() called "
          + Duration.ofNanos(stopCalled - cut).toMillis() + " ms after the partition, STOPPED "
          + Duration.ofNanos(stopped - stopCalled).toMillis() + " ms after that (stopTimeout "
          + stopTimeout.toMillis() + " ms)");
      assertThat(a.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.LOST));
      assertThat(Duration.ofNanos(stopped - stopCalled)).as("within the stop timeout (plus a loaded machine's slack)")
          .isBetween(stopTimeout.minusMillis(50), stopTimeout.plusSeconds(2));
      assertThat(a.isLive()).as("its stop() still hangs: the process must be restarted").isFalse();

      Optional<ServiceLog.Entry> takeover = log.await("b", ServiceLog.Kind.START, cut, Duration.ofSeconds(15));
      assertThat(takeover).as("b takes over").isPresent();
      linkA.heal();
      // A lease duration of b's renewals: time for the stopped runner to (wrongly) write again.
      int renewals = (int) (MockApi.LEASE_DURATION.toMillis() / MockApi.RETRY_PERIOD.toMillis());
      assertThat(RealServerRecord.awaitWrites(api, LEASE, "b", renewals)).as("b renews").isTrue();
      List<LeaseWrite> writes = RealServerRecord.upToNow(api, LEASE);
      int firstOfB = writes.stream().map(LeaseWrite::holder).toList().indexOf("b");
      assertThat(firstOfB).as("b's write is in the record").isNotNegative();
      assertThat(writes.subList(firstOfB, writes.size())).extracting(LeaseWrite::holder)
          .as("after b took over, a (stopped) never wrote the Lease again").doesNotContain("a");
      assertThat(states.stream().filter(s -> s.kind() == ElectionState.Kind.LEADING)).as("a led once").hasSize(1);
      assertThat(log.overlap()).isEmpty();
    } finally {
      stopRelease.countDown();
      a.close();
    }
  }

  /**
   * Runners of one JVM share one I/O pool for their Lease calls. Runners whose API server cannot be reached (their
   * proxy forwards nothing: requests hang) must not keep a runner of the same JVM whose server answers from
   * renewing: it leads throughout.
   *
   * <p>It does not (found on kube-apiserver 1.20, twice of twice): each cut-off runner's RBAC preflight holds one
   * of the eight threads the I/O pool then had, since it calls the user's client with the user's timeouts and
   * retries and no deadline of the runner's; with eight of them every thread hangs in {@code RbacPreflight.check},
   * the healthy leader's renewal waits in the pool's queue ({@code update Lease got no answer within 750ms} from a
   * server that answers), and it loses its Lease at its renew deadline, about 1.6 s after the others started, and
   * cannot read the Lease again while they are cut off. The runner before 0201dfc gave each runner threads of its
   * own. A probe beside this test: four runners cut off at start still held four threads in the preflight 6 s
   * later (the healthy one kept leading on the other four); eight leaders cut off while they led kept six to eight
   * threads busy in reads, each bounded by the request timeout and interrupted, and the healthy one kept leading.
   * Fixed since: the shared I/O pool grows while calls hang, and the preflight's reviews are bounded (10 s).
   */
  @Test
  void runnersCutOffFromTheirServerDoNotStopAHealthyRunnerOfTheSameJvmFromRenewing() throws Exception {
    List<ElectionState> healthyStates = new CopyOnWriteArrayList<>();
    List<ElectionRunner> cutOff = new ArrayList<>();
    try (Replica healthy = Replica.start("healthy", api.replica("healthy").client(),
        settings("healthy").leaseName("healthy").build(), log, new ElectionListener() {
          @Override
          public void stateChanged(ElectionState previous, ElectionState current) {
            healthyStates.add(current);
          }
        })) {
      assertThat(Replica.awaitTrue(healthy::leads, Duration.ofSeconds(10))).isTrue();
      for (int i = 0; i < CUT_OFF_RUNNERS; i++) {
        ReplicaLink link = api.replica("cut-" + i);
        link.client();
        link.partition();
        cutOff.add(ElectionRunner.builder()
            .client(link.client())
            .decision(MockApi.CONTEND)
            .settings(settings("cut-" + i).leaseName("cut-" + i).build())
            .service(log.service("cut-" + i))
            .start());
      }
      // Three lease durations of the healthy runner's renewals while the cut-off ones hold I/O threads.
      int renewals = (int) (MockApi.LEASE_DURATION.toMillis() * 3 / MockApi.RETRY_PERIOD.toMillis());
      assertThat(RealServerRecord.awaitWrites(api, "healthy", "healthy", renewals))
          .as("the healthy runner renews; its states %s", healthyStates).isTrue();

      String ioThreads = Thread.getAllStackTraces().entrySet().stream()
          .filter(e -> e.getKey().getName().startsWith("election-io-"))
          .map(e -> e.getKey().getName() + " in " + java.util.Arrays.stream(e.getValue())
              .filter(f -> f.getClassName().startsWith("io.github.electionpolicy")).findFirst()
              .map(f -> f.getClassName().substring(f.getClassName().lastIndexOf('.') + 1) + "." + f.getMethodName())
              .orElse("(idle)"))
          .sorted().toList().toString();
      assertThat(healthyStates).as("the healthy runner's states while %d runners of its JVM were cut off; the "
          + "shared I/O threads then: %s", CUT_OFF_RUNNERS, ioThreads)
          .filteredOn(state -> state.kind() != ElectionState.Kind.LEADING).isEmpty();
      assertThat(healthy.leads()).isTrue();
    } finally {
      cutOff.forEach(ElectionRunner::close);
    }
  }

  /** From {@code start()} to LEADING, alone, on a Lease that does not exist yet; a fresh Lease each round. */
  @Test
  void measureTimeToLeadOnAnEmptyLease() throws Exception {
    List<Long> millis = new ArrayList<>();
    for (int round = 0; round < ROUNDS; round++) {
      ReplicaLink link = api.replica("lead-" + round);
      link.client().getKubernetesVersion(); // the client's first connection is not the runner's to pay for
      long start = System.nanoTime();
      try (ElectionRunner runner = ElectionRunner.builder()
          .client(link.client())
          .decision(MockApi.CONTEND)
          .settings(settings("a").leaseName("lead-" + round).build())
          .service(log.service("lead-" + round))
          .start()) {
        assertThat(Replica.awaitTrue(() -> runner.state().kind() == ElectionState.Kind.LEADING,
            Duration.ofSeconds(20))).as("state %s", runner.state()).isTrue();
        millis.add(Duration.ofNanos(System.nanoTime() - start).toMillis());
      }
    }
    System.out.println("MEASURED real server time to lead on an empty Lease (start() to LEADING), " + ROUNDS
        + " rounds: " + millis + " ms");
  }

  /** From the leader's {@code close()} to the follower LEADING, each round the other way round. */
  @Test
  void measureGracefulHandOver() throws Exception {
    List<Long> millis = new ArrayList<>();
    Replica leader = Replica.startLeader("r0", api.replica("r0").client(), settings("r0").build(), log);
    try {
      for (int round = 1; round <= ROUNDS; round++) {
        String name = "r" + round;
        Replica follower = Replica.start(name, api.replica(name).client(), settings(name).build(), log);
        String leaderName = leader.name;
        assertThat(Replica.awaitTrue(() -> follower.runner.state().equals(
            new ElectionState.Following(Optional.of(leaderName))), Duration.ofSeconds(10))).isTrue();
        // A settled follower, its watch open: one more renewal of the leader's reached it.
        assertThat(RealServerRecord.awaitWrites(api, LEASE, leaderName, 1)).isTrue();
        long closing = System.nanoTime();
        leader.close();
        assertThat(Replica.awaitTrue(follower::leads, Duration.ofSeconds(10))).isTrue();
        millis.add(Duration.ofNanos(System.nanoTime() - closing).toMillis());
        leader = follower;
      }
    } finally {
      leader.close();
    }
    assertThat(log.overlap()).isEmpty();
    System.out.println("MEASURED real server graceful hand-over (leader's close() to the follower LEADING), "
        + ROUNDS + " rounds: " + millis + " ms");
  }
}
