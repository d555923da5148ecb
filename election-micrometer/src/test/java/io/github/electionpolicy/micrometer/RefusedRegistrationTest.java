package io.github.electionpolicy.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A start that a registry refuses (a meter filter or a registry that throws, as Prometheus's does with {@code
 * throwExceptionOnRegistrationFailure()}) leaves nothing behind: no meter in any registry, a composite's children
 * included, and no runner running. Adversarial review h-review.
 */
class RefusedRegistrationTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** A filter that refuses the meter named {@code name} while {@code refuser} holds the registry it is on. */
  private static void refuseWhile(MeterRegistry registry, AtomicReference<MeterRegistry> refuser, String name) {
    registry.config().meterFilter(new MeterFilter() {
      @Override
      public Meter.Id map(Meter.Id id) {
        if (refuser.get() == registry && id.getName().equals(name)) {
          throw new IllegalArgumentException("a meter named " + name + " exists with other tag keys");
        }
        return id;
      }
    });
  }

  /**
   * The order in which {@code composite} hands a new meter to its children: it iterates an identity set, so the
   * test asks rather than assumes.
   */
  private static List<MeterRegistry> childOrder(CompositeMeterRegistry composite, MeterRegistry... children) {
    List<MeterRegistry> order = new CopyOnWriteArrayList<>();
    for (MeterRegistry child : children) {
      child.config().onMeterAdded(meter -> {
        if (meter.getId().getName().equals("probe")) {
          order.add(child);
        }
      });
    }
    Gauge probe = Gauge.builder("probe", () -> 1).register(composite);
    composite.remove(probe);
    return order;
  }

  /**
   * A composite whose second child refuses the master status: the composite registers it in its first child before
   * it asks the second, and keeps no composite meter when the second throws, so the binder removed nothing of it.
   * The first child kept a gauge of the closed runner, which then shadowed the next runner's: it read 0 while that
   * runner led.
   */
  @Test
  void aCompositeWhoseSecondChildRefusesAMeterKeepsNoneInItsFirstChild() throws Exception {
    CompositeMeterRegistry composite = new CompositeMeterRegistry();
    SimpleMeterRegistry one = new SimpleMeterRegistry();
    SimpleMeterRegistry two = new SimpleMeterRegistry();
    AtomicReference<MeterRegistry> refuser = new AtomicReference<>();
    refuseWhile(one, refuser, ElectionMetrics.MASTER_STATUS);
    refuseWhile(two, refuser, ElectionMetrics.MASTER_STATUS);
    composite.add(one).add(two);
    List<MeterRegistry> order = childOrder(composite, one, two);
    assertThat(order).hasSize(2);
    MeterRegistry first = order.get(0);
    refuser.set(order.get(1));

    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(composite);
    CountDownLatch stopped = new CountDownLatch(1);
    assertThatThrownBy(() -> metrics.start(ElectionRunner.builder()
        .client(api.replica("replica-1").client())
        .decision(MeteredReplica.CONTEND)
        .settings(MeteredReplica.fastSettings(api.namespace(), "replica-1"))
        .service(LeaderService.of(term -> { }, stopped::countDown))))
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("other tag keys");
    assertThat(composite.getMeters()).as("the composite keeps none").isEmpty();
    assertThat(first.getMeters()).as("the child that accepted the refused meter keeps none of the closed runner's")
        .isEmpty();

    // The consequence: the next runner, once nothing refuses, leads, and every registry says so.
    refuser.set(null);
    try (ElectionRunner runner = metrics.start(ElectionRunner.builder()
        .client(api.replica("replica-2").client())
        .decision(MeteredReplica.CONTEND)
        .settings(MeteredReplica.fastSettings(api.namespace(), "replica-2"))
        .service(LeaderService.of(term -> { }, () -> { })))) {
      Await.until("replica-2 leads", () -> runner.state().kind() == ElectionState.Kind.LEADING,
          Duration.ofSeconds(15), runner::toString);
      assertThat(first.get(ElectionMetrics.MASTER_STATUS).gauge().value())
          .as("the first child's master status reads the runner that leads").isEqualTo(1.0);
    }
  }

  /**
   * A registry bound while the runner runs refuses a meter: {@code bindTo} throws, and the binder is not bound to it.
   * It was (the registry kept in its set before the meters were registered): binding it again once it accepts did
   * nothing, so that registry never got the meters, and the next start through the binder failed on it. Review
   * h-review's suspicion, made a test.
   */
  @Test
  void aRegistryThatRefusesTheMetersAtBindToIsNotBoundAndCanBeBoundAgain() throws Exception {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    AtomicReference<MeterRegistry> refuser = new AtomicReference<>(registry);
    refuseWhile(registry, refuser, ElectionMetrics.MASTER_STATUS);
    ElectionMetrics metrics = new ElectionMetrics();
    try (ElectionRunner runner = metrics.start(ElectionRunner.builder()
        .client(api.replica("replica-1").client())
        .decision(MeteredReplica.CONTEND)
        .settings(MeteredReplica.fastSettings(api.namespace(), "replica-1"))
        .service(LeaderService.of(term -> { }, () -> { })))) {
      Await.until("replica-1 leads", () -> runner.state().kind() == ElectionState.Kind.LEADING,
          Duration.ofSeconds(15), runner::toString);
      assertThatThrownBy(() -> metrics.bindTo(registry)).isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("other tag keys");
      assertThat(registry.getMeters()).as("all or none").isEmpty();
      assertThat(metrics.toString()).contains("0 registries");

      refuser.set(null);
      metrics.bindTo(registry);
      assertThat(registry.get(ElectionMetrics.MASTER_STATUS).gauge().value())
          .as("bound again once it accepts: the master status reads the runner that leads").isEqualTo(1.0);
    }
  }

  /**
   * Two registries, the second refusing a meter, both failing to remove one (their listener on removals throws, here
   * an Error): the removal's exception left start() before the runner was closed, and hid the refusal.
   */
  @Test
  void aRegistryThatThrowsWhileTheMetersOfARefusedStartAreRemovedLeavesNoRunnerRunning() throws Exception {
    SimpleMeterRegistry one = new SimpleMeterRegistry();
    SimpleMeterRegistry two = new SimpleMeterRegistry();
    // The binder's order of registries is not known: whichever comes second refuses.
    refuseOnceTheOtherHasIt(one, two);
    refuseOnceTheOtherHasIt(two, one);
    for (MeterRegistry registry : List.of(one, two)) {
      registry.config().onMeterRemoved(meter -> {
        throw new AssertionError("this registry's removal listener fails");
      });
    }
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(one);
    metrics.bindTo(two);
    CountDownLatch stopped = new CountDownLatch(1);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    try {
      metrics.start(ElectionRunner.builder()
          .decision(MeteredReplica.KILL_SWITCH_OFF)
          .service(LeaderService.of(term -> { }, stopped::countDown)));
    } catch (RuntimeException | Error e) {
      thrown.set(e);
    }
    assertThat(stopped.await(10, java.util.concurrent.TimeUnit.SECONDS))
        .as("the runner was closed: its service stopped").isTrue();
    assertThat(thrown.get()).as("start() throws the registry's refusal")
        .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("other tag keys");
  }

  /**
   * The caller of a refused start learns of the refusal only once the closed runner's listeners heard it stop: a
   * Spring context destroys the beans they use as soon as the start throws ({@code RefusedMetricsStartTest} in
   * election-spring-boot). A listener that takes 300 ms over {@code STOPPED}: before, the start threw while it ran.
   */
  @Test
  void aRefusedStartThrowsOnlyOnceTheListenersHeardTheRunnerStop() {
    AtomicReference<MeterRegistry> refuser = new AtomicReference<>();
    SimpleMeterRegistry refusing = new SimpleMeterRegistry();
    refuseWhile(refusing, refuser, ElectionMetrics.DECISION);
    refuser.set(refusing);
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(refusing);
    java.util.concurrent.atomic.AtomicBoolean heard = new java.util.concurrent.atomic.AtomicBoolean();
    ElectionRunner.Builder builder = ElectionRunner.builder()
        .decision(MeteredReplica.KILL_SWITCH_OFF)
        .service(LeaderService.of(term -> { }, () -> { }))
        .listener(new io.github.electionpolicy.fabric8.ElectionListener() {
          @Override
          public void stateChanged(ElectionState previous, ElectionState current) {
            if (current.kind() == ElectionState.Kind.STOPPED) {
              java.util.concurrent.locks.LockSupport.parkNanos(300_000_000L);
              heard.set(true);
            }
          }
        });

    assertThatThrownBy(() -> metrics.start(builder)).hasMessageContaining("other tag keys");
    assertThat(heard).as("the listener heard STOPPED when the start threw").isTrue();
  }

  /** A listener that never returns from {@code STOPPED} holds a refused start for the runner's stop timeout only. */
  @Test
  void aListenerThatNeverReturnsHoldsARefusedStartForTheStopTimeoutOnly() throws Exception {
    AtomicReference<MeterRegistry> refuser = new AtomicReference<>();
    SimpleMeterRegistry refusing = new SimpleMeterRegistry();
    refuseWhile(refusing, refuser, ElectionMetrics.DECISION);
    refuser.set(refusing);
    ElectionMetrics metrics = new ElectionMetrics();
    metrics.bindTo(refusing);
    CountDownLatch release = new CountDownLatch(1);
    ElectionRunner.Builder builder = ElectionRunner.builder()
        .decision(MeteredReplica.KILL_SWITCH_OFF)
        .settings(io.github.electionpolicy.fabric8.LeaseSettings.builder().leaseName("stuck")
            .stopTimeout(Duration.ofMillis(300)).build())
        .service(LeaderService.of(term -> { }, () -> { }))
        .listener(new io.github.electionpolicy.fabric8.ElectionListener() {
          @Override
          public void stateChanged(ElectionState previous, ElectionState current) {
            if (current.kind() == ElectionState.Kind.STOPPED) {
              try {
                release.await(60, java.util.concurrent.TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          }
        });
    try {
      long begun = System.nanoTime();
      assertThatThrownBy(() -> metrics.start(builder)).hasMessageContaining("other tag keys");
      assertThat(Duration.ofNanos(System.nanoTime() - begun)).as("the refused start's wait")
          .isLessThan(Duration.ofSeconds(10));
    } finally {
      release.countDown();
    }
  }

  private static void refuseOnceTheOtherHasIt(MeterRegistry registry, MeterRegistry other) {
    registry.config().meterFilter(new MeterFilter() {
      @Override
      public Meter.Id map(Meter.Id id) {
        if (id.getName().equals(ElectionMetrics.DECISION) && other.find(ElectionMetrics.DECISION).meter() != null) {
          throw new IllegalArgumentException("a meter named " + id.getName() + " exists with other tag keys");
        }
        return id;
      }
    });
  }
}
