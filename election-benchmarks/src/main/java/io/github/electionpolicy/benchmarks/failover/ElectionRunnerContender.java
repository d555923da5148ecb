package io.github.electionpolicy.benchmarks.failover;

import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.fabric8.LeaderService;
import java.util.Map;

/**
 * Our adapter, {@link ElectionRunner}, wired the way its documentation shows, with the decision computed
 * by the core for a process whose work uses the Kubernetes API (so it contends) and one reconciler that
 * records when it starts and stops. Graceful close is {@link ElectionRunner#close()}; a crash closes the
 * client first, so the release that close would write cannot reach the server. On loss it contends again
 * instead of exiting the benchmark's JVM. Not thread-safe: the harness drives it from one thread.
 */
public final class ElectionRunnerContender implements Contender {

  /** The factory for the {@code ours} column. */
  public static final ContenderFactory FACTORY = ContenderFactory.of("ours", ElectionRunnerContender::new);

  private final ReplicaSpec spec;
  private final ElectionRunner.Builder builder;
  private ElectionRunner runner;

  /**
   * Prepares the runner; nothing is sent before {@link #start()}.
   *
   * @param spec the replica
   */
  public ElectionRunnerContender(ReplicaSpec spec) {
    this.spec = spec;
    ServiceRecorder recorder = spec.recorder();
    LeaseSettings settings = LeaseSettings.builder()
        .leaseName(spec.leaseName())
        .namespace(spec.namespace())
        .identity(spec.identity())
        .leaseDuration(spec.timings().leaseDuration())
        .renewDeadline(spec.timings().renewDeadline())
        .retryPeriod(spec.timings().retryPeriod())
        .lossPolicy(LossPolicy.recontend())
        .build();
    this.builder = ElectionRunner.builder()
        .client(spec.client())
        .decide(ElectionPolicy.defaults(), Environment.of(Map.of()), Substrate.usingKubernetesApi("kubernetes"))
        .settings(settings)
        .service(LeaderService.of(term -> recorder.started(), recorder::stopped));
  }

  @Override
  public void start() {
    runner = builder.start();
  }

  @Override
  public void close() {
    runner.close();
    spec.client().close();
  }

  @Override
  public void crash() {
    spec.client().close();
    runner.close();
  }
}
