package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The delete that follows a membership Lease's clean release, over the real transport and HTTP: conditional on the
 * released record, so that a Lease someone wrote since is left in place (409), and one already gone is a 404; both
 * are answers, not a reason to fail a close.
 */
class MembershipLeaseDeleteTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  private Fabric8LeaseTransport transport() {
    return new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE, MockApi.fastSettings("pod-a").build(),
        SharedPools.io(), SharedPools.handOver(), new SharedPools.InFlight(64, "Lease requests"),
        new SharedPools.InFlight(16, "leadership Event writes"));
  }

  private static LeaseStep.Answer call(java.util.function.Function<LeaseTransport.Answered, LeaseTransport.Call> call)
      throws Exception {
    CompletableFuture<LeaseStep.Answer> answer = new CompletableFuture<>();
    call.apply((a, failure) -> answer.complete(a));
    return answer.get(20, TimeUnit.SECONDS);
  }

  /** Takes the Lease as pod-a and releases it as a close does: the released record, as the server stored it. */
  private static LeaseRecord takeAndRelease(Fabric8LeaseTransport transport) throws Exception {
    Instant now = Instant.now().truncatedTo(ChronoUnit.MICROS);
    LeaseStep.Answer taken = call(done -> transport.create(new LeaseRecord("pod-a", 2, now, now, 0, null), done));
    LeaseRecord held = ((LeaseStep.Answer.Written) taken).record();
    LeaseStep.Answer released = call(done -> transport.update(new LeaseRecord(null, 1, now, now,
        held.leaseTransitions(), held.resourceVersion()), done));
    return ((LeaseStep.Answer.Written) released).record();
  }

  private Lease stored() {
    return api.client().leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE).get();
  }

  @Test
  void aDeleteAfterANewerWriteLeavesTheNewerLeaseInPlace() throws Exception {
    try (Fabric8LeaseTransport transport = transport()) {
      LeaseRecord released = takeAndRelease(transport);
      // Someone takes the released Lease before the delete goes out.
      api.client().leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE)
          .edit(lease -> {
            lease.getSpec().setHolderIdentity("pod-b");
            return lease;
          });
      String newer = stored().getMetadata().getResourceVersion();
      assertThat(newer).isNotEqualTo(released.resourceVersion());

      LeaseStep.Answer deleted = call(done -> transport.delete(released, done));

      assertThat(deleted).isInstanceOfSatisfying(LeaseStep.Answer.Failed.class,
          failed -> assertThat(failed.kind()).isEqualTo(LeaseStep.FailureKind.CONFLICT));
      Lease left = stored();
      assertThat(left).as("the newer Lease").isNotNull();
      assertThat(left.getSpec().getHolderIdentity()).isEqualTo("pod-b");
      assertThat(left.getMetadata().getResourceVersion()).isEqualTo(newer);
    }
  }

  @Test
  void aDeleteOfTheReleasedRecordRemovesTheLeaseAndASecondIsNotFound() throws Exception {
    try (Fabric8LeaseTransport transport = transport()) {
      LeaseRecord released = takeAndRelease(transport);

      assertThat(call(done -> transport.delete(released, done))).isEqualTo(new LeaseStep.Answer.Missing());
      assertThat(stored()).isNull();
      assertThat(call(done -> transport.delete(released, done))).isInstanceOfSatisfying(LeaseStep.Answer.Failed.class,
          failed -> assertThat(failed.kind()).isEqualTo(LeaseStep.FailureKind.NOT_FOUND));
    }
  }

  @Test
  void aRecordWithoutAResourceVersionIsNeverSent() throws Exception {
    try (Fabric8LeaseTransport transport = transport()) {
      takeAndRelease(transport);

      LeaseStep.Answer refused = call(done -> transport.delete(new LeaseRecord(null, 1, null, null, 1, null), done));

      assertThat(refused).isInstanceOf(LeaseStep.Answer.Failed.class);
      assertThat(stored()).as("an unconditional delete is never sent").isNotNull();
    }
  }
}
