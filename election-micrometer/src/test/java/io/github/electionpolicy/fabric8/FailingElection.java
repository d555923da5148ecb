package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.function.BooleanSupplier;

/**
 * Test access, from another module's tests, to the runner's package-private Lease transport seam: the one way to
 * make a runner's own election logic fail (an {@link Error} on its loop, which ends it as
 * {@link ElectionState.StopCause#ELECTION_FAILED}) now that it has no thread of its own to interrupt.
 */
public final class FailingElection {

  private FailingElection() {}

  /**
   * Gives {@code builder} the real fabric8 transport, except that a renewal sent while {@code failNow} is true
   * throws an {@link OutOfMemoryError} on the runner's loop.
   *
   * @param builder the builder to change
   * @param client the client the runner would use
   * @param namespace the Lease's namespace
   * @param settings the runner's settings (also set on the builder)
   * @param failNow when renewals fail
   * @return the builder
   */
  public static ElectionRunner.Builder failRenewalsWhen(ElectionRunner.Builder builder, KubernetesClient client,
      String namespace, LeaseSettings settings, BooleanSupplier failNow) {
    LeaseTransport real = new Fabric8LeaseTransport(client, namespace, settings, SharedPools.io());
    LeaseTransport failing = new LeaseTransport() {
      @Override
      public Call read(Answered done) {
        return real.read(done);
      }

      @Override
      public Call create(LeaseRecord record, Answered done) {
        return real.create(record, done);
      }

      @Override
      public Call delete(LeaseRecord released, Answered done) {
        throw new UnsupportedOperationException("an election's Lease is never deleted");
      }

      @Override
      public Call update(LeaseRecord record, Answered done) {
        if (failNow.getAsBoolean()) {
          throw new OutOfMemoryError("simulated: the election loop ran out of memory while it renewed");
        }
        return real.update(record, done);
      }

      @Override
      public Call watch(WatchEvents events) {
        return real.watch(events);
      }

      @Override
      public Call preflight(java.util.function.Consumer<java.util.Optional<LeaseAccessDeniedException>> done,
          java.util.function.Consumer<Throwable> failed) {
        return real.preflight(done, failed);
      }

      @Override
      public void recordEvent(LeadershipEvent event, Runnable done) {
        real.recordEvent(event, done);
      }

      @Override
      public void close() {
        real.close();
      }
    };
    return builder.client(client).settings(settings).transport(failing);
  }
}
