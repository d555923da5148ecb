package io.github.electionpolicy.benchmarks.failover;

import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import java.util.concurrent.CompletableFuture;

/**
 * The stock fabric8 {@link LeaderElector} with a {@link LeaseLock} and {@code releaseOnCancel}, wired the way
 * its documentation shows. Graceful close cancels the election, which releases the Lease on the calling
 * thread; a crash closes the client first, so that release cannot reach the server. Not thread-safe: the
 * harness drives it from one thread.
 */
public final class StockLeaderElectorContender implements Contender {

  /** The factory for the {@code stock} column. */
  public static final ContenderFactory FACTORY = ContenderFactory.of("stock", StockLeaderElectorContender::new);

  private final ReplicaSpec spec;
  private final LeaderElector elector;
  private CompletableFuture<?> election;

  /**
   * Builds the elector; nothing is sent before {@link #start()}.
   *
   * @param spec the replica
   */
  public StockLeaderElectorContender(ReplicaSpec spec) {
    this.spec = spec;
    ServiceRecorder recorder = spec.recorder();
    LeaderElectionConfig config = new LeaderElectionConfigBuilder()
        .withName(spec.leaseName())
        .withLock(new LeaseLock(spec.namespace(), spec.leaseName(), spec.identity()))
        .withLeaseDuration(spec.timings().leaseDuration())
        .withRenewDeadline(spec.timings().renewDeadline())
        .withRetryPeriod(spec.timings().retryPeriod())
        .withReleaseOnCancel(true)
        .withLeaderCallbacks(new LeaderCallbacks(recorder::started, recorder::stopped, newLeader -> { }))
        .build();
    this.elector = spec.client().leaderElector().withConfig(config).build();
  }

  @Override
  public void start() {
    election = elector.start();
  }

  @Override
  public void close() {
    // Cancelling runs stopLeading on this thread: the release is written before cancel returns.
    election.cancel(true);
    spec.client().close();
  }

  @Override
  public void crash() {
    spec.client().close();
    election.cancel(true);
  }
}
