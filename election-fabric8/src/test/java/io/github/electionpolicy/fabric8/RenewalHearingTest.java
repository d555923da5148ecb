package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Which listeners hear renewals ({@code RunnerCallbacks.hearsRenewals}), from the adversarial review h-attack5 of
 * commit f1e6852: every way a listener can override {@code renewed(Duration)} is seen.
 */
class RenewalHearingTest {

  /** A sub-interface of the library's whose default method hears renewals. */
  interface CountingListener extends ElectionListener {
    @Override
    default void renewed(Duration roundTrip) {}
  }

  private static final class PrivateCounting implements CountingListener {}

  private static final class PrivateBoth implements ElectionListener, CountingListener {}

  private static class Base implements ElectionListener {
    @Override
    public void renewed(Duration roundTrip) {}
  }

  private static final class Sub extends Base {}

  private static final class StateOnly implements ElectionListener {
    @Override
    public void stateChanged(ElectionState previous, ElectionState current) {}
  }

  /** As Kotlin (without -Xjvm-default) or Scala compile an inherited body: a forwarder in the class itself. */
  private static final class Forwarder implements CountingListener {
    @Override
    public void renewed(Duration roundTrip) {
      CountingListener.super.renewed(roundTrip);
    }
  }

  @Test
  void everyOverrideIsSeenAndAListenerOfTheStateOnlyIsNot() {
    assertThat(RunnerCallbacks.hearsRenewals(new PrivateCounting())).as("a sub-interface's default").isTrue();
    assertThat(RunnerCallbacks.hearsRenewals(new PrivateBoth())).as("both interfaces, either order").isTrue();
    assertThat(RunnerCallbacks.hearsRenewals(new Sub())).as("a non-public superclass's override").isTrue();
    assertThat(RunnerCallbacks.hearsRenewals(new Forwarder())).as("a forwarder").isTrue();
    assertThat(RunnerCallbacks.hearsRenewals(new ElectionListener() {
      @Override
      public void renewed(Duration roundTrip) {}
    })).as("an anonymous class").isTrue();
    ElectionListener proxy = (ElectionListener) java.lang.reflect.Proxy.newProxyInstance(
        ElectionListener.class.getClassLoader(), new Class<?>[] {ElectionListener.class}, (p, m, a) -> null);
    assertThat(RunnerCallbacks.hearsRenewals(proxy)).as("a proxy").isTrue();
    assertThat(RunnerCallbacks.hearsRenewals(new StateOnly())).isFalse();
    assertThat(RunnerCallbacks.hearsRenewals(new ElectionListener() {})).isFalse();
  }
}
