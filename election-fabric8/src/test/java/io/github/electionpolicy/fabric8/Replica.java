package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
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
    ElectionRunner runner = ElectionRunner.builder()
        .client(client)
        .decision(MockApi.CONTEND)
        .settings(settings)
        .service(log.service(name))
        .listener(listener)
        .start();
    return new Replica(name, client, runner);
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

  static boolean awaitTrue(java.util.function.BooleanSupplier condition, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (condition.getAsBoolean()) {
        return true;
      }
      Thread.sleep(5);
    }
    return condition.getAsBoolean();
  }

  @Override
  public void close() {
    runner.close();
  }
}
