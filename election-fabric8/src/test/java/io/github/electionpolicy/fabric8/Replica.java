package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;

/** One controller process of a test: its own client, its own runner, reconcilers recorded in a shared log. */
final class Replica implements AutoCloseable {

  final String name;
  final KubernetesClient client;
  final ElectionRunner runner;

  private Replica(String name, KubernetesClient client, ElectionRunner runner) {
    this.name = name;
    this.client = client;
    this.runner = runner;
  }

  static Replica start(String name, KubernetesClient client, LeaseSettings settings, ServiceLog log) {
    return start(name, client, settings, log, new ElectionListener() {});
  }

  static Replica start(String name, KubernetesClient client, LeaseSettings settings, ServiceLog log,
      ElectionListener listener) {
    return start(name, client, settings, log, listener, Readiness.CONNECTED);
  }

  static Replica start(String name, KubernetesClient client, LeaseSettings settings, ServiceLog log,
      Readiness readiness) {
    return start(name, client, settings, log, new ElectionListener() {}, readiness);
  }

  static Replica start(String name, KubernetesClient client, LeaseSettings settings, ServiceLog log,
      ElectionListener listener, Readiness readiness) {
    ElectionRunner runner = ElectionRunner.builder()
        .client(client)
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(log.service(name))
        .listener(listener)
        .readiness(readiness)
        .start();
    return new Replica(name, client, runner);
  }

  /**
   * Starts a replica and waits until it leads: {@code start()} returns before the first Lease call, so a
   * replica started right after it would otherwise race it for the Lease. The deadline is generous: the first
   * runner of a JVM (the client's first requests, a cold JIT) on a loaded two-core machine was seen to need more
   * than 5 s; a replica that leads returns at once.
   */
  static Replica startLeader(String name, KubernetesClient client, LeaseSettings settings, ServiceLog log)
      throws InterruptedException {
    Replica replica = start(name, client, settings, log);
    if (!awaitTrue(replica::leads, Duration.ofSeconds(20))) {
      replica.close();
      throw new AssertionError(name + " did not lead within 20 s of its start: " + replica.runner.state());
    }
    return replica;
  }

  /** A replica whose monotonic clock runs {@code offset} nanoseconds ahead, so a test can move its time. */
  static Replica start(String name, KubernetesClient client, LeaseSettings settings, ServiceLog log,
      java.util.function.LongSupplier offset) {
    ElectionRunner runner = ElectionRunner.builder()
        .client(client)
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(log.service(name))
        .ticker(() -> System.nanoTime() + offset.getAsLong())
        .start();
    return new Replica(name, client, runner);
  }

  boolean leads() {
    return runner.state().kind() == ElectionState.Kind.LEADING;
  }

  /** Whether {@code condition} holds within {@code timeout}; {@link Await#holds} under the name these tests use. */
  static boolean awaitTrue(java.util.function.BooleanSupplier condition, Duration timeout)
      throws InterruptedException {
    return Await.holds(condition, timeout);
  }

  @Override
  public void close() {
    runner.close();
  }
}
