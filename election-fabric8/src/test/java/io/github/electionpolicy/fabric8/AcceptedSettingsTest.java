package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.electionpolicy.InvalidElectionSettingException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every setting {@code build()} accepts also works at run time, at its extremes: the longest {@code stopTimeout},
 * the smallest {@code healthBudget}. (From the adversarial review of the start-up, settings and health changes.)
 */
class AcceptedSettingsTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  // ---- finding 1 of the review of the start-up, settings and health changes --------------------------

  /**
   * Attack: stopTimeout is only checked to be positive, so the idiom for "wait for my reconcilers as long as
   * they need" ({@code ChronoUnit.FOREVER.getDuration()}, {@code Duration.ofMillis(Long.MAX_VALUE)}) is
   * accepted. close() then calls {@code ServiceControl.stopAndWait}, whose {@code timeout.toNanos()} overflows:
   * close() throws ArithmeticException after setting closing=true and submitting the stop, but before
   * {@code elector.finish(...)}. The Lease loop, told only to stop acquiring, keeps RENEWING the Lease for
   * ever: the reconcilers are stopped, no other replica can ever take over (the controller is dead
   * cluster-wide while this process lives), awaitStopped() never returns, and a second close() is a no-op.
   * The same overflow in LossReaction.exit() kills the loop after a loss under EXIT before the exiter runs.
   *
   * <p>Fix: reject a stopTimeout whose nanoseconds overflow in SettingsChecks.stopTimeout (naming it), or
   * saturate the deadline arithmetic (e.g. a helper that caps toNanos at Long.MAX_VALUE / 2).
   */
  @Test
  void closeReleasesTheLeaseWhateverStopTimeoutTheSettingsAccept() throws Exception {
    LeaseSettings settings;
    try {
      settings = MockApi.fastSettings("a").stopTimeout(Duration.ofMillis(Long.MAX_VALUE)).build();
    } catch (InvalidElectionSettingException rejected) {
      // Also a fix: fail loudly at build, naming the setting.
      assertThat(rejected).hasMessageContaining("stopTimeout");
      return;
    }
    Replica a = Replica.startLeader("a", api.client(), settings, log);
    try {
      Throwable thrown = catchThrowable(a.runner::close);

      assertThat(thrown).as("close() must not throw").isNull();
      assertThat(a.runner.awaitStopped(Duration.ofSeconds(5))).as("the runner stops").isTrue();
      assertThat(api.lease().getSpec().getHolderIdentity()).as("the Lease is released").isNullOrEmpty();
    } finally {
      RunnerHooks.crash(a.runner);
    }
  }

  // ---- finding 2 of the review of the start-up, settings and health changes --------------------------

  /**
   * Attack: a follower with an open watch reads the Lease only once per leaseDuration (commit 351ba10), and
   * liveness is "a Lease call succeeded within healthBudget". The settings only require healthBudget >=
   * renewDeadline, so any healthBudget in [renewDeadline, leaseDuration + request time) is accepted although
   * a perfectly healthy watching follower then reports NOT live for part of every lease duration: the kubelet
   * restarts healthy followers over and over. The easiest way to get there is the documented toBuilder(): it
   * copies the derived default healthBudget (25 s for the defaults), so {@code
   * defaults.toBuilder().leaseDuration(30s).renewDeadline(20s)} builds fine and its followers flap to not live.
   *
   * <p>Fix: require healthBudget >= leaseDuration + requestTimeout (what a watching follower needs; the
   * default already satisfies it) in SettingsChecks.healthBudget, or count a watch event as contact.
   */
  @Test
  void aHealthyWatchingFollowerStaysLiveUnderEveryAcceptedHealthBudget() throws Exception {
    LeaseSettings.Builder b = MockApi.fastSettings("b").leaseDuration(Duration.ofSeconds(3))
        .healthBudget(Duration.ofMillis(1600));   // >= renewDeadline (1.5 s): accepted
    LeaseSettings followerSettings;
    try {
      followerSettings = b.build();
    } catch (InvalidElectionSettingException rejected) {
      assertThat(rejected).hasMessageContaining("healthBudget");
      return;
    }
    LeaseSettings leaderSettings = MockApi.fastSettings("a").leaseDuration(Duration.ofSeconds(3)).build();
    try (Replica a = Replica.startLeader("a", api.client(), leaderSettings, log);
        Replica follower = Replica.start("b", api.client(), followerSettings, log)) {
      assertThat(Replica.awaitTrue(
          () -> follower.runner.state().equals(new ElectionState.Following(Optional.of("a")))
              && follower.runner.isReady(), Duration.ofSeconds(5))).isTrue();

      List<String> notLive = new ArrayList<>();
      // Health at each of the leader's next 35 renewals (7 s at these timings): a follower that flaps to not live
      // does so for part of every lease duration (3 s), far longer than the retry period between two samples.
      for (int sample = 0; sample < 35; sample++) {
        assertThat(api.awaitWrites("a", 1)).as("the leader renews").isTrue();
        ElectionHealth h = follower.runner.health();
        if (!h.live() && h.state().kind() == ElectionState.Kind.FOLLOWING) {
          notLive.add("not live while following and ready=" + h.ready() + ", since last success "
              + h.sinceLastLeaseSuccess().map(Duration::toMillis).orElse(-1L) + " ms");
        }
      }
      assertThat(a.leads()).as("nothing went wrong: the leader still leads").isTrue();
      assertThat(notLive).as("a healthy follower, in touch through its watch, must stay live").isEmpty();
    }
  }
}
