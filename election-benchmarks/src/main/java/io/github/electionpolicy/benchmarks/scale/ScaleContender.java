package io.github.electionpolicy.benchmarks.scale;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.benchmarks.failover.Timings;
import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossPolicy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One replica of one election in the scale benchmark, on a client it shares with every other replica of the
 * run (so it never closes it). Stamps, with {@link System#nanoTime()}, the call to {@link #start()} and the
 * instant it first led: for ours the state change to {@code LEADING}, for stock its {@code onStartLeading}.
 * {@link #start()} and {@link #close()} are called from the harness thread; the stamps are thread-safe.
 */
abstract class ScaleContender {

  private final AtomicLong startedAt = new AtomicLong();
  private final AtomicLong ledAt = new AtomicLong();

  /** Our {@link ElectionRunner} at these timings, contending again on loss. */
  static ScaleContender ours(KubernetesClient client, String namespace, String lease, String identity,
      Timings timings) {
    return new ScaleContender() {
      private ElectionRunner runner;

      @Override
      void begin() {
        LeaseSettings settings = LeaseSettings.builder()
            .leaseName(lease)
            .namespace(namespace)
            .identity(identity)
            .leaseDuration(timings.leaseDuration())
            .renewDeadline(timings.renewDeadline())
            .retryPeriod(timings.retryPeriod())
            .lossPolicy(LossPolicy.recontend())
            .build();
        runner = ElectionRunner.builder()
            .client(client)
            .decide(ElectionPolicy.defaults(), Environment.of(java.util.Map.of()),
                Substrate.usingKubernetesApi("kubernetes"))
            .settings(settings)
            .listener(new ElectionListener() {
              @Override
              public void stateChanged(ElectionState previous, ElectionState current) {
                if (current instanceof ElectionState.Leading) {
                  led();
                }
              }
            })
            .service(LeaderService.of(term -> { }, () -> { }))
            .rbacPreflight(!Boolean.getBoolean("probe.norbac"))
            .start();
      }

      @Override
      void end() {
        runner.close();
      }
    };
  }

  /** Stock fabric8's {@code LeaderElector} with a {@code LeaseLock} at these timings, releasing on cancel. */
  static ScaleContender stock(KubernetesClient client, String namespace, String lease, String identity,
      Timings timings) {
    return new ScaleContender() {
      private CompletableFuture<?> election;

      @Override
      void begin() {
        var config = new LeaderElectionConfigBuilder()
            .withName(lease)
            .withLock(new LeaseLock(namespace, lease, identity))
            .withLeaseDuration(timings.leaseDuration())
            .withRenewDeadline(timings.renewDeadline())
            .withRetryPeriod(timings.retryPeriod())
            .withReleaseOnCancel(true)
            .withLeaderCallbacks(new LeaderCallbacks(this::led, () -> { }, newLeader -> { }))
            .build();
        election = client.leaderElector().withConfig(config).build().start();
      }

      @Override
      void end() {
        election.cancel(true);
      }
    };
  }

  /** Starts contending; returns without waiting to lead. */
  final void start() {
    startedAt.set(System.nanoTime());
    begin();
  }

  /** Stops and releases. */
  final void close() {
    end();
  }

  /** Whether it has led at least once. */
  final boolean hasLed() {
    return ledAt.get() != 0;
  }

  /** When it first led, in {@link System#nanoTime()}; 0 until then. */
  final long ledAt() {
    return ledAt.get();
  }

  /** When {@link #start()} was called. */
  final long startedAt() {
    return startedAt.get();
  }

  final void led() {
    ledAt.compareAndSet(0, System.nanoTime());
  }

  abstract void begin();

  abstract void end();
}
