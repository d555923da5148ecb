package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Whatever ends the election thread ends the reconcilers' term with it, and the runner reports STOPPED. */
class ElectionThreadFailureTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void anErrorInTheElectionLogicStopsTheServicesAndExits() throws Exception {
    List<Integer> exits = new CopyOnWriteArrayList<>();
    AtomicLong exitNanos = new AtomicLong();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(status -> {
      exitNanos.set(System.nanoTime());
      exits.add(status);
    })).build();
    LeaderService logged = log.service("a");
    LeaderService slowToStop = new LeaderService() {
      @Override
      public void start(LeadershipTerm term) throws Exception {
        logged.start(term);
      }

      @Override
      public void stop() throws Exception {
        // Must wait: a service that takes a while to stop, so an exit that did not wait for it would come first;
        // nothing marks an exit that (rightly) does not come early.
        Thread.sleep(300);
        logged.stop();
      }
    };
    java.util.concurrent.atomic.AtomicBoolean failRenewals = new java.util.concurrent.atomic.AtomicBoolean();
    Fabric8LeaseTransport real = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE, settings,
        SharedPools.io());
    LeaseTransport failing = new ForwardingTransport(real) {
      @Override
      public Call update(LeaseRecord record, Answered done) {
        if (failRenewals.get()) {
          throw new OutOfMemoryError("simulated: the loop ran out of memory while it renewed");
        }
        return super.update(record, done);
      }
    };
    try (ElectionRunner a = ElectionRunner.builder()
        .client(api.client())
        .transport(failing)
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(slowToStop)
        .start()) {
      assertThat(log.await("a", ServiceLog.Kind.START, 0, Duration.ofSeconds(5))).isPresent();
      LeadershipTerm term = a.currentTerm().orElseThrow();

      failRenewals.set(true);

      assertThat(a.awaitStopped(Duration.ofSeconds(5))).isTrue();
      assertThat(exits).containsExactly(LossPolicy.LOSS_EXIT_STATUS);
      assertThat(log.of("a", ServiceLog.Kind.STOP)).as("stopped before the exit").hasSize(1)
          .allSatisfy(stop -> assertThat(stop.nanos() - exitNanos.get()).isNegative());
      assertThat(log.running()).isEmpty();
      assertThat(term.isValid()).isFalse();
      assertThat(a.state()).isInstanceOfSatisfying(ElectionState.Stopped.class, stopped -> {
        assertThat(stopped.cause()).isEqualTo(ElectionState.StopCause.ELECTION_FAILED);
        assertThat(stopped.failure()).get().isInstanceOf(OutOfMemoryError.class);
      });
    }
  }

  @Test
  void lossHandlerThatThrowsAnErrorStillLeavesTheRunnerStopped() throws Exception {
    ReplicaLink proxy = api.proxy();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.custom(lostTerm -> {
      throw new AssertionError("a bug in the loss handler");
    })).build();
    try (Replica a = Replica.start("a", api.client(proxy.url()), settings, log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

      proxy.refuseConnections();

      assertThat(a.runner.awaitStopped(MockApi.RENEW_DEADLINE.plusSeconds(3))).isTrue();
      assertThat(log.running()).isEmpty();
      assertThat(a.runner.state()).isEqualTo(new ElectionState.Stopped(ElectionState.StopCause.LOST));
    }
  }
}
