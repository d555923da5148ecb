package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A renewal comes every retry period: it is handed over (a task on a shared worker) only to the listeners whose
 * class overrides {@link ElectionListener#renewed}, so a runner whose listeners watch only its state costs no
 * thread per renewal; those that do override it hear every renewal, in order with the rest.
 */
class RenewalListenersTest {

  @RegisterExtension
  final MockApi api = new MockApi();
  private final ServiceLog log = new ServiceLog();

  /** Overrides renewed through a superclass of its own. */
  private static class Counting implements ElectionListener {
    final List<String> heard = new CopyOnWriteArrayList<>();

    @Override
    public void renewed(Duration roundTrip) {
      heard.add("renewed");
    }
  }

  @Test
  void onlyAListenerWhoseClassOverridesRenewedHearsRenewals() {
    assertThat(RunnerCallbacks.hearsRenewals(new ElectionListener() { })).isFalse();
    assertThat(RunnerCallbacks.hearsRenewals(new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) { }
    })).isFalse();
    assertThat(RunnerCallbacks.hearsRenewals(new Counting())).isTrue();
    assertThat(RunnerCallbacks.hearsRenewals(new Counting() { })).as("inherited from a class").isTrue();
    ElectionListener proxy = (ElectionListener) java.lang.reflect.Proxy.newProxyInstance(
        ElectionListener.class.getClassLoader(), new Class<?>[] {ElectionListener.class}, (p, m, a) -> null);
    assertThat(RunnerCallbacks.hearsRenewals(proxy)).as("a proxy may do anything").isTrue();
  }

  @Test
  void aListenerOfRenewalsBesideOneOfStateOnlyHearsEveryRenewalInOrder() throws Exception {
    Counting renewals = new Counting();
    List<String> states = new CopyOnWriteArrayList<>();
    ElectionListener stateOnly = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        states.add(current.kind().toString());
        renewals.heard.add(current.kind().toString());
      }
    };
    try (ElectionRunner runner = ElectionRunner.builder().client(api.client()).decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build()).service(log.service("a"))
        .listener(stateOnly).listener(renewals).start()) {
      assertThat(Replica.awaitTrue(() -> renewals.heard.stream().filter("renewed"::equals).count() >= 3,
          Duration.ofSeconds(10))).isTrue();
    }
    // The listeners hear STOPPED on their lane, possibly just after close() returned.
    assertThat(Replica.awaitTrue(() -> states.contains("STOPPED"), Duration.ofSeconds(5))).isTrue();
    assertThat(states).startsWith("LEADING").endsWith("STOPPED");
    assertThat(renewals.heard).startsWith("LEADING", "renewed").endsWith("STOPPED");
  }
}
