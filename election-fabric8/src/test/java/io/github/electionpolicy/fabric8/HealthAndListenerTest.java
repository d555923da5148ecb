package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Observable state, health for probes, and listener hooks. */
class HealthAndListenerTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  @Test
  void listenerSeesEveryStateChangeInOrder() throws Exception {
    List<String> changes = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        changes.add(previous.kind() + "->" + current.kind());
      }
    };
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log, listener);
    assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

    a.close();

    assertThat(Replica.awaitTrue(() -> changes.size() == 2, Duration.ofSeconds(2))).isTrue();
    assertThat(changes).containsExactly("FOLLOWING->LEADING", "LEADING->STOPPED");
  }

  @Test
  void listenerHearsOfRenewFailuresWhileTheServerIsUnreachable() throws Exception {
    ReplicaLink proxy = api.proxy();
    List<Duration> failures = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
        failures.add(sinceLastRenewal);
      }
    };
    try (Replica a = Replica.start("a", api.client(proxy.url()), MockApi.fastSettings("a").build(), log,
        listener)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

      proxy.refuseConnections();

      assertThat(Replica.awaitTrue(() -> !a.leads(), Duration.ofSeconds(3))).isTrue();
      assertThat(failures).isNotEmpty()
          .allSatisfy(since -> assertThat(since).isLessThan(MockApi.RENEW_DEADLINE.plusMillis(100)));
    }
  }

  @Test
  void followerIsReadyAndLiveAndNamesTheLeader() throws Exception {
    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log);
        Replica b = Replica.start("b", api.client(), MockApi.fastSettings("b").build(), log)) {
      assertThat(Replica.awaitTrue(() -> a.leads()
          && b.runner.state().equals(new ElectionState.Following(Optional.of("a"))), Duration.ofSeconds(5)))
          .isTrue();

      ElectionHealth health = b.runner.health();

      assertThat(health.ready()).isTrue();
      assertThat(health.live()).isTrue();
      assertThat(health.state()).isEqualTo(new ElectionState.Following(Optional.of("a")));
      assertThat(health.sinceLastLeaseSuccess()).hasValueSatisfying(
          since -> assertThat(since).isLessThan(MockApi.RENEW_DEADLINE));
      assertThat(b.runner.currentTerm()).isEmpty();
      assertThat(b.runner.namespace()).contains(MockApi.NAMESPACE);
    }
  }

  @Test
  void closedRunnerIsNotReady() throws Exception {
    Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log);
    assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

    a.close();

    assertThat(a.runner.health().ready()).isFalse();
    assertThat(a.runner.state()).isEqualTo(new ElectionState.Stopped());
  }
}
