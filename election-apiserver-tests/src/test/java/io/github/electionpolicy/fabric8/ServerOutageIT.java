package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The real server goes away (kube-apiserver or etcd killed with SIGKILL) and comes back: the leader's services
 * stop by its renew deadline, and under {@code RECONTEND} it leads again once the server answers. Each test
 * restarts what it killed, even when it fails.
 */
class ServerOutageIT {

  private final KubeCluster cluster = KubeCluster.fromSystemProperties();

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();
  private final ServiceLog log = new ServiceLog();

  @Test
  void whenTheApiServerIsKilledTheLeaderStopsAndLeadsAgainAfterItsRestart() throws Exception {
    outage("kube-apiserver", cluster::killApiServer, cluster::startApiServer);
  }

  @Test
  void whenEtcdIsKilledTheLeaderStopsAndLeadsAgainAfterItsRestart() throws Exception {
    outage("etcd", cluster::killEtcd, cluster::startEtcd);
  }

  private void outage(String component, Runnable kill, Runnable restart) throws Exception {
    LeaseSettings settings = MockApi.fastSettings("a").namespace(api.namespace()).build();
    try (Replica a = Replica.startLeader("a", api.replica("a").client(), settings, log)) {
      LeadershipTerm before = a.runner.currentTerm().orElseThrow();
      assertThat(RealServerRecord.awaitWrites(api, MockApi.LEASE, "a", 2)).as("a renews").isTrue();

      long killed = System.nanoTime();
      Optional<ServiceLog.Entry> stopped;
      try {
        kill.run();
        stopped = log.await("a", ServiceLog.Kind.STOP, killed, Duration.ofSeconds(15));
      } finally {
        restart.run();
      }
      cluster.awaitReady(Duration.ofSeconds(60));
      Optional<ServiceLog.Entry> again = log.await("a", ServiceLog.Kind.START, killed, Duration.ofSeconds(30));

      assertThat(stopped).as("the leader's services stop while %s is down", component).isPresent();
      System.out.println("MEASURED real server, " + component + " killed: services stopped after "
          + Duration.ofNanos(stopped.get().nanos() - killed).toMillis() + " ms (renew deadline "
          + MockApi.RENEW_DEADLINE.toMillis() + " ms)");
      assertThat(Duration.ofNanos(stopped.get().nanos() - killed))
          .as("stopped within the renew deadline (plus the slack a loaded machine needs)")
          .isLessThan(MockApi.RENEW_DEADLINE.plusSeconds(2));
      assertThat(before.isValid()).as("the old term is over for good").isFalse();
      assertThat(again).as("RECONTEND: a leads again once %s is back", component).isPresent();
      assertThat(again.get().term().leaseTransitions()).isGreaterThanOrEqualTo(before.leaseTransitions());
      assertThat(again.get().term()).isNotEqualTo(before);
      assertThat(log.overlap()).isEmpty();
    }
  }
}
