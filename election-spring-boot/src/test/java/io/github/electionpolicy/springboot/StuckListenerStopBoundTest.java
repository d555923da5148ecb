package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * docs/spring-boot.md: {@code stop()} returns once the runner is closed and the listeners heard it stop, "at most
 * stop-timeout more". Review h-close: with an {@code ElectionRunner.close()} that itself waited for the listeners (at
 * most the stop timeout; de704d5, reverted), {@code ElectionLifecycle.awaitListeners} waited for them again with a
 * fresh stop timeout, so a listener that does not return held the stop for two stop timeouts; red there, green here.
 */
class StuckListenerStopBoundTest {

  @Test
  void aStuckListenerHoldsStopForOneStopTimeoutNotTwo() throws Exception {
    CountDownLatch hearing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ElectionListener stuck = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        if (current.kind() == ElectionState.Kind.STOPPED) {
          hearing.countDown();
          try {
            release.await(60, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
    AtomicReference<Duration> took = new AtomicReference<>();
    try {
      Contexts.election()
          .withPropertyValues("election.lease-name=a", "election.stop-timeout=2s", Contexts.UNELECTED)
          .withBean(LeaderService.class, () -> LeaderService.of(term -> { }, () -> { }))
          .withBean(ElectionListener.class, () -> stuck)
          .run(context -> {
            assertThat(context).hasNotFailed();
            ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
            long begun = System.nanoTime();
            lifecycle.stop();
            took.set(Duration.ofNanos(System.nanoTime() - begun));
          });
    } finally {
      release.countDown();
    }
    assertThat(hearing.getCount()).isZero();
    // An unelected runner closes at once: the stop is the listener's stop timeout, 2 s, plus slack; not 4 s.
    assertThat(took.get()).as("stop() with a listener that does not return").isLessThan(Duration.ofMillis(3_300));
  }
}
