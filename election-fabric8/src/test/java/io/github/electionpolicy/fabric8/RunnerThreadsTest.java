package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Runners share one loop and two small pools: a runner has no thread of its own, and once {@code awaitStopped()}
 * returns, however it stopped, no thread runs its code (a pool thread is named for the runner only while it runs
 * one of the runner's callbacks).
 */
class RunnerThreadsTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  /** The threads running a callback of the runner with this identity: {@code election-<lane>[lease:identity]}. */
  private static List<String> threadsOf(String identity) {
    String tag = "[" + MockApi.LEASE + ":" + identity + "]";
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(name -> name.startsWith("election-") && name.endsWith(tag))
        .collect(Collectors.toList());
  }

  private ElectionRunner leader(String identity, LossPolicy policy) throws InterruptedException {
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(identity).lossPolicy(policy).build())
        .service(log.service(identity))
        .listener(new ElectionListener() { })
        .start();
    assertThat(log.await(identity, ServiceLog.Kind.START, 0, Duration.ofSeconds(5))).isPresent();
    return runner;
  }

  @Test
  @Timeout(value = 20, unit = TimeUnit.SECONDS)
  void runnerThatExitedAfterItsLeaseWasTakenLeavesNoThreadOnceAwaitStoppedReturns() throws Exception {
    List<Integer> exits = new CopyOnWriteArrayList<>();
    ElectionRunner a = leader("a", LossPolicy.exit(exits::add));
    try {
      api.takeLeaseAs("intruder");

      a.awaitStopped();

      assertThat(exits).containsExactly(LossPolicy.LOSS_EXIT_STATUS);
      assertThat(threadsOf("a")).isEmpty();
    } finally {
      a.close();
    }
  }

  @Test
  void runnerWhoseLossHandlerStoppedAfterTheServerWentAwayLeavesNoThreadOnceAwaitStoppedReturns()
      throws Exception {
    ElectionRunner a = leader("a", LossPolicy.custom(lost -> LossHandler.AfterLoss.STOP));
    try {
      api.stopServer();

      assertThat(a.awaitStopped(MockApi.RENEW_DEADLINE.plusSeconds(10))).isTrue();

      assertThat(log.running()).isEmpty();
      assertThat(threadsOf("a")).isEmpty();
    } finally {
      a.close();
    }
  }

  @Test
  void closedRunnerLeavesNoThreadOnceAwaitStoppedReturns() throws Exception {
    ElectionRunner a = leader("a", LossPolicy.recontend());
    // Another runner in the same JVM, a follower, keeps its threads.
    Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log);
    try {
      a.close();

      assertThat(a.awaitStopped(Duration.ofSeconds(5))).isTrue();
      assertThat(threadsOf("a")).isEmpty();
      assertThat(Replica.awaitTrue(b::leads, Duration.ofSeconds(5))).as("the other runner goes on").isTrue();
    } finally {
      a.close();
      b.close();
    }
  }

  @Test
  void aServiceRunsOnAThreadNamedForItsRunner() throws Exception {
    List<String> names = new CopyOnWriteArrayList<>();
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(LeaderService.of(term -> names.add(Thread.currentThread().getName()), () -> { }))
        .start();
    try {
      assertThat(Replica.awaitTrue(() -> !names.isEmpty(), Duration.ofSeconds(5))).isTrue();
      assertThat(names).containsExactly("election-services[" + MockApi.LEASE + ":a]");
    } finally {
      a.close();
    }
  }

  @Test
  void thirtyRunnersInOneJvmShareAHandfulOfThreads() throws Exception {
    List<Replica> replicas = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 30; i++) {
        replicas.add(Replica.start("r" + i, api.client(), MockApi.fastSettings("r" + i).build(), log));
      }
      assertThat(Replica.awaitTrue(() -> replicas.stream().filter(Replica::leads).count() == 1,
          Duration.ofSeconds(10))).isTrue();
      List<String> library = Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive)
          .map(Thread::getName).filter(name -> name.startsWith("election-")).collect(Collectors.toList());
      // One loop for all; I/O threads only as many as calls were in flight at once in the start-up burst (30
      // preflights), never more than the pool's bound; callback threads as many as callbacks ran at once.
      assertThat(library).as("the loop").filteredOn(name -> name.equals("election-loop")).hasSize(1);
      assertThat(library).as("I/O threads").filteredOn(name -> name.startsWith("election-io-"))
          .hasSizeLessThanOrEqualTo(SharedPools.IO_MAX_CALLS);
      // A runner has no thread of its own: a pool thread carries a runner's name only while it runs its code.
      assertThat(library).as("threads named for a runner, left idle").noneMatch(name -> name.startsWith("election-")
          && name.endsWith("]") && !name.startsWith("election-services[") && !name.startsWith("election-listeners["));
    } finally {
      for (Replica replica : replicas) {
        replica.close();
      }
    }
  }
}
