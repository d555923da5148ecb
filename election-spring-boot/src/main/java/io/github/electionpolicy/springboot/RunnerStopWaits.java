package io.github.electionpolicy.springboot;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaseSettings;
import java.time.Duration;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The waits of {@link ElectionLifecycle} for a runner that a {@code stop()} closed, each bounded by the Lease
 * settings: before the next start, until that runner has stopped ({@link #stopBound()}); before the stop returns,
 * until its listeners heard {@code STOPPED} ({@code stopTimeout}); and, when the runner stops only after a callback of
 * its own returned, until then before the client the lifecycle made is closed, on a thread of its own.
 *
 * <p>Thread-safe: immutable; each wait blocks only the thread that calls it.
 */
final class RunnerStopWaits {

  // The lifecycle's category: its WARNs are ElectionLifecycle's (docs/spring-boot.md names it).
  private static final Logger LOG = LoggerFactory.getLogger(ElectionLifecycle.class);

  private final LeaseSettings settings;

  RunnerStopWaits(LeaseSettings settings) {
    this.settings = Objects.requireNonNull(settings, "settings");
  }

  /**
   * Waits until {@code previous}, the runner a {@code stop()} closed, has stopped, which a stop from one of its own
   * callbacks did not wait for, so that the next runner's services never run while the first one's still stop (and
   * the binder of {@code ElectionMetrics}, which measures one runner until it stopped, can start the next). A runner
   * stops within {@link #stopBound()}, which bounds this wait too (a listener stuck for ever does not hang the start).
   * Returns at once if there is none, or it is not closed, or it stopped; from one of its own callbacks it returns at
   * once too. An interrupt ends the wait, and the flag is set again.
   */
  void awaitClosedRunnerStopped(ElectionRunner previous) {
    if (previous == null || !previous.isClosed() || previous.state().kind() == ElectionState.Kind.STOPPED) {
      return;
    }
    try {
      if (!previous.awaitStopped(stopBound())) {
        LOG.warn("{} has not stopped within {}: starting the next runner all the same", previous, stopBound());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * The bound of a stop, as {@link ElectionLifecycle}'s class comment says: {@code 2 × stopTimeout + 5 ×
   * requestTimeout + 1 s}.
   */
  Duration stopBound() {
    try {
      return settings.stopTimeout().multipliedBy(2).plus(settings.requestTimeout().multipliedBy(5))
          .plusSeconds(1);
    } catch (ArithmeticException e) {
      // A stop timeout of billions of years: no wait is that long.
      return Duration.ofSeconds(Long.MAX_VALUE);
    }
  }

  /**
   * Waits, at most {@code stopTimeout}, until the listeners heard {@code STOPPED}: {@code close()} returns once
   * it is reported, but the listeners hear it on the runner's callback thread, and the context destroys its
   * beans (those a listener uses among them) as soon as {@code stop()} returns. Interrupts do not cut it short
   * (Spring interrupts a closing thread it takes for stuck); the flag is set again.
   */
  void awaitListeners(ElectionRunner closing) {
    // In Durations, not nanoseconds: any positive stop timeout is valid, and awaitStopped caps it.
    long begun = System.nanoTime();
    boolean interrupted = false;
    try {
      while (true) {
        try {
          if (!closing.awaitStopped(settings.stopTimeout().minusNanos(System.nanoTime() - begun))) {
            LOG.warn("The election listeners of {} have not heard it stop within stopTimeout={}; the context "
                + "closes on", closing, settings.stopTimeout());
          }
          return;
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Closes the client the lifecycle made once {@code closing} stopped, on a thread of its own. */
  static void closeWhenStopped(ElectionRunner closing, KubernetesClient owned) {
    Thread closer = new Thread(() -> {
      try {
        closing.awaitStopped();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        owned.close();
      }
    }, "election-client-close");
    closer.setDaemon(true);
    closer.start();
  }
}
