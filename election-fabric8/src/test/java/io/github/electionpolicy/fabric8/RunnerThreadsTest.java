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

/** Once {@code awaitStopped()} returns, however the runner stopped, none of its threads is left. */
class RunnerThreadsTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  /** The live threads of the runner with this identity: each is named {@code election-<role>[lease:identity]}. */
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
    assertThat(threadsOf(identity)).as("threads while leading")
        .anyMatch(name -> name.startsWith("election-lease["))
        .anyMatch(name -> name.startsWith("election-reconcilers["))
        .anyMatch(name -> name.startsWith("election-lease-request-"));
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
      assertThat(threadsOf("b")).isNotEmpty();
    } finally {
      a.close();
      b.close();
    }
  }
}
