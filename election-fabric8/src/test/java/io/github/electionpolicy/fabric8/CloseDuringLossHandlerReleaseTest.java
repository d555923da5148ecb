package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Review h-rev2, finding A end to end: a close() while the loss handler runs, after a loss (renewals failing until the
 * renew deadline) whose services' stop() threw, leaves the Lease to expire (rule 6 of docs/reliability.md). Green
 * before and after the fix in RunnerLifecycleClosing (checked): the lifecycle then commanded "end contention; finish
 * elector: release", but the elector takes its finish at the "end contention" (LeaseElector.afterLoss), none was there
 * yet, and the later release was ignored. A guard of the end-to-end rule, should that order change. It did (h-relloss:
 * the FinishElector alone answers a loss when it may release, ReleaseAfterLossThenCloseTest), and this stays green:
 * after a stop that threw the lifecycle asks no release at all.
 */
class CloseDuringLossHandlerReleaseTest {

  private final ShardedRunnerFaultsTest.Faults faults = new ShardedRunnerFaultsTest.Faults();

  @RegisterExtension
  final MockApi api = new MockApi(faults::around).answeringAccessReviews();

  @Test
  void aCloseWhileTheHandlerRunsAfterAStopThatThrewDoesNotReleaseTheLease() throws Exception {
    CountDownLatch handling = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.custom(term -> {
      handling.countDown();
      try {
        answer.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return LossHandler.AfterLoss.STOP;
    })).build();
    ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(new LeaderService() {
          @Override
          public void start(LeadershipTerm term) { }

          @Override
          public void stop() {
            throw new IllegalStateException("the work may still run");
          }
        })
        .start();
    try {
      assertThat(Replica.awaitTrue(() -> a.state() instanceof ElectionState.Leading, Duration.ofSeconds(10)))
          .as("a leads").isTrue();
      faults.add(request -> "PUT".equals(request.getMethod())
          && ShardedRunnerFaultsTest.path(request).endsWith("/" + MockApi.LEASE)
          ? ShardedRunnerFaultsTest.status(500, "InternalError") : null);
      assertThat(handling.await(15, TimeUnit.SECONDS)).as("the handler runs after the loss").isTrue();
      faults.clear(); // the API server answers again: the Lease still shows a's last renewal

      a.close();

      assertThat(a.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.CLOSED));
      assertThat(api.lease().getSpec().getHolderIdentity()).as("the Lease is left to expire, not released")
          .isEqualTo("a");
    } finally {
      answer.countDown();
      a.close();
    }
  }
}
