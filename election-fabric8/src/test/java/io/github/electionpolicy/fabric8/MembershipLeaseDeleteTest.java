package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The delete that follows a membership Lease's clean release, over the real transport and HTTP: conditional on the
 * released record, so that a Lease someone wrote since is left in place (409), and one already gone is a 404; both
 * are answers, not a reason to fail a close; and one created again, even with the released resourceVersion, is told
 * apart by its uid and left in place.
 */
class MembershipLeaseDeleteTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  /**
   * The transport's settings: single calls, never an election, so each request may take 10 s (half the renew
   * deadline). The 750 ms of the fast settings failed the first create of a cold JVM at load 18 on 2 cores.
   */
  private static LeaseSettings settings() {
    return MockApi.fastSettings("pod-a").leaseDuration(java.time.Duration.ofSeconds(30))
        .renewDeadline(java.time.Duration.ofSeconds(20)).retryPeriod(java.time.Duration.ofSeconds(2)).build();
  }

  private Fabric8LeaseTransport transport() {
    return new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE, settings(),
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

  /**
   * A store whose resourceVersions went back (etcd restored from a snapshot older than what a client saw: its
   * revisions count again from the snapshot's), so that an object written after the restore can carry a
   * resourceVersion a client saw on another object before. From {@link #goBack} on, the resourceVersion a DELETE's
   * preconditions give is taken as that many versions later, as the restored store numbers the same write; nothing
   * else changes.
   */
  private static final class VersionsWentBack implements java.util.function.UnaryOperator<Dispatcher> {
    private volatile long back;

    void goBack(long versions) {
      back = versions;
    }

    @Override
    public Dispatcher apply(Dispatcher delegate) {
      return new Dispatcher() {
        @Override
        @SuppressWarnings("unchecked")
        public MockResponse dispatch(RecordedRequest request) {
          byte[] body = request.getBody().getBytes();
          if (back == 0 || !"DELETE".equals(request.getMethod()) || body.length == 0) {
            return delegate.dispatch(request);
          }
          Map<String, Object> options = Serialization.unmarshal(new String(body, StandardCharsets.UTF_8), Map.class);
          Map<String, Object> preconditions = (Map<String, Object>) options.get("preconditions");
          if (preconditions != null && preconditions.get("resourceVersion") != null) {
            preconditions.put("resourceVersion",
                String.valueOf(Long.parseLong((String) preconditions.get("resourceVersion")) + back));
          }
          return delegate.dispatch(new RecordedRequest(request.getHttpVersion(), request.method(), request.getPath(),
              request.getHeaders(), new Buffer(Serialization.asJson(options).getBytes(StandardCharsets.UTF_8))));
        }
      };
    }
  }

  /**
   * The membership Lease was deleted and created again by someone else, and the store's versions went back (a
   * restore), so the new Lease carries the very resourceVersion the release wrote: only the uid tells them apart.
   * The close's delete sends the released Lease's uid too, and the new Lease stays. The same delete with the
   * resourceVersion alone (the uid precondition dropped) would have removed it: shown last, on the same server.
   */
  @Test
  void aLeaseCreatedAgainWithTheReleasedResourceVersionButAnotherUidIsLeftInPlace() throws Exception {
    VersionsWentBack versions = new VersionsWentBack();
    try (MockApi restored = new MockApi(versions);
        Fabric8LeaseTransport transport = new Fabric8LeaseTransport(restored.client(), MockApi.NAMESPACE,
            settings(), SharedPools.io(), SharedPools.handOver(),
            new SharedPools.InFlight(64, "Lease requests"), new SharedPools.InFlight(16, "leadership Event writes"))) {
      restored.answeringAccessReviews();
      LeaseRecord released = takeAndRelease(transport);
      var leases = restored.client().leases().inNamespace(MockApi.NAMESPACE);
      String releasedUid = leases.withName(MockApi.LEASE).get().getMetadata().getUid();
      // Someone deletes it and creates another of the same name.
      leases.withName(MockApi.LEASE).delete();
      Lease again = leases.resource(new io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder()
          .withNewMetadata().withName(MockApi.LEASE).withNamespace(MockApi.NAMESPACE).endMetadata()
          .withNewSpec().withHolderIdentity("pod-b").endSpec().build()).create();
      assertThat(again.getMetadata().getUid()).isNotEqualTo(releasedUid);
      versions.goBack(Long.parseLong(again.getMetadata().getResourceVersion())
          - Long.parseLong(released.resourceVersion()));

      LeaseStep.Answer deleted = call(done -> transport.delete(released, done));

      assertThat(deleted).isInstanceOfSatisfying(LeaseStep.Answer.Failed.class,
          failed -> assertThat(failed.kind()).isEqualTo(LeaseStep.FailureKind.CONFLICT));
      Lease left = leases.withName(MockApi.LEASE).get();
      assertThat(left).as("the new Lease").isNotNull();
      assertThat(left.getMetadata().getUid()).isEqualTo(again.getMetadata().getUid());
      assertThat(left.getSpec().getHolderIdentity()).isEqualTo("pod-b");

      // The broken variant: the resourceVersion alone, as the close would send it without the uid precondition.
      var http = restored.client().getHttpClient();
      var withoutUid = http.newHttpRequestBuilder()
          .uri(restored.url() + "apis/coordination.k8s.io/v1/namespaces/" + MockApi.NAMESPACE + "/leases/"
              + MockApi.LEASE)
          .delete("application/json", "{\"apiVersion\":\"v1\",\"kind\":\"DeleteOptions\",\"preconditions\":"
              + "{\"resourceVersion\":\"" + released.resourceVersion() + "\"}}")
          .build();
      assertThat(http.sendAsync(withoutUid, String.class).get(20, TimeUnit.SECONDS).code()).isEqualTo(200);
      assertThat(leases.withName(MockApi.LEASE).get()).as("deleted without the uid precondition").isNull();
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
