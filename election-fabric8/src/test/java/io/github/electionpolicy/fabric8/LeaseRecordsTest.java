package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/**
 * The untyped reading and writing of a Lease ({@link LeaseRecords}) says what fabric8's typed model says for every
 * Lease a real API server can hold: the same record from the same JSON, the same JSON for the same record, and every
 * field of a Lease kept on a write. Where the two differ, on scalars of the wrong JSON type that only a mock can
 * store, the untyped reading refuses what the typed model coerces, by design.
 */
class LeaseRecordsTest {

  private static final KubernetesSerialization JSON = new KubernetesSerialization();

  @Property(tries = 300)
  void theUntypedWriteIsTheTypedModelsAndReadsBackAsBoth(@ForAll @LongRange(min = 0, max = 4_102_444_800L) long second,
      @ForAll @IntRange(min = 0, max = 999_999_999) int nanos, @ForAll @IntRange(min = 1, max = 3600) int seconds,
      @ForAll @IntRange(min = 0, max = Integer.MAX_VALUE) int transitions, @ForAll boolean free) {
    Instant acquired = Instant.ofEpochSecond(second, nanos);
    Instant renewed = acquired.plusNanos(nanos / 3);
    LeaseRecord record = new LeaseRecord(free ? null : "replica-a", seconds, acquired, renewed, transitions, null);

    String untyped = JSON.asJson(LeaseRecords.lease(record, null, "ns", "lease"));
    String typed = JSON.asJson(typedLease(record));

    assertThat(JSON.unmarshal(untyped, Map.class)).isEqualTo(JSON.unmarshal(typed, Map.class));
    LeaseRecord stored = LeaseRecords.record(withVersion(untyped, "7"));
    assertThat(stored).isEqualTo(LeaseRecords.record(JSON.unmarshal(jsonWithVersion(typed, "7"), Lease.class)));
    assertThat(stored.sameContent(new LeaseRecord(record.holder(), seconds, micros(acquired), micros(renewed),
        transitions, null))).as("times kept to the microsecond, as MicroTime is").isTrue();
    assertThat(stored.resourceVersion()).isEqualTo("7");
  }

  @Test
  void aWriteKeepsEveryFieldOfTheLeaseAsSeenAndChangesOnlyTheSpecAndTheVersion() {
    Lease seen = new LeaseBuilder()
        .withNewMetadata().withName("lease").withNamespace("ns").withUid("u-1").withResourceVersion("41")
        .addToLabels("team", "orders").addToAnnotations("owner", "ops@example.com")
        .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("Deployment")
            .withName("orders").withUid("d-1").build())
        .endMetadata()
        .withNewSpec().withHolderIdentity("other").withLeaseDurationSeconds(15).withPreferredHolder("b")
        .endSpec().build();
    @SuppressWarnings("unchecked")
    Map<String, Object> read = JSON.unmarshal(JSON.asJson(seen), Map.class);
    read.put("unknownField", 1);
    String before = JSON.asJson(read);

    Map<String, Object> written = LeaseRecords.lease(
        new LeaseRecord("me", 10, Instant.EPOCH, Instant.EPOCH, 3, "41"), read, "ns", "lease");

    assertThat(JSON.asJson(read)).as("the Lease as seen is not changed").isEqualTo(before);
    Lease back = JSON.unmarshal(JSON.asJson(written), Lease.class);
    assertThat(back.getMetadata().getLabels()).containsEntry("team", "orders");
    assertThat(back.getMetadata().getAnnotations()).containsEntry("owner", "ops@example.com");
    assertThat(back.getMetadata().getOwnerReferences()).singleElement()
        .satisfies(o -> assertThat(o.getName()).isEqualTo("orders"));
    assertThat(back.getMetadata().getUid()).isEqualTo("u-1");
    assertThat(back.getMetadata().getResourceVersion()).isEqualTo("41");
    assertThat(back.getSpec().getHolderIdentity()).isEqualTo("me");
    assertThat(back.getSpec().getPreferredHolder()).as("the spec replaced whole, as client-go does").isNull();
    assertThat(written).containsKey("unknownField");
    assertThat(LeaseRecords.uid(written)).isEqualTo("u-1");
  }

  /**
   * A hand-over's proof is the one annotation a write sets or drops as its record says: written with the hand-over,
   * read back typed (a watch's event) and untyped (a read's answer) alike, and dropped by the next write of a record
   * without it (the successor's renewal), every other annotation kept.
   */
  @Test
  void aHandOversProofIsWrittenReadBackBothWaysAndDroppedByTheNextWrite() {
    @SuppressWarnings("unchecked")
    Map<String, Object> seen = JSON.unmarshal(JSON.asJson(new LeaseBuilder()
        .withNewMetadata().withName("lease").withNamespace("ns").withResourceVersion("41")
        .addToAnnotations("owner", "ops@example.com").endMetadata()
        .withNewSpec().withHolderIdentity("old").endSpec().build()), Map.class);

    Map<String, Object> handOver = LeaseRecords.lease(
        new LeaseRecord("next", 15, Instant.EPOCH, Instant.EPOCH, 4, "41", "55"), seen, "ns", "lease");
    Lease typed = JSON.unmarshal(JSON.asJson(handOver), Lease.class);
    assertThat(typed.getMetadata().getAnnotations()).containsEntry(LeaseRecords.HAND_OVER_PROOF, "55")
        .containsEntry("owner", "ops@example.com");
    assertThat(LeaseRecords.record(typed).handOverProof()).isEqualTo("55");
    assertThat(LeaseRecords.record(handOver).handOverProof()).isEqualTo("55");
    assertThat(LeaseRecords.record(handOver)).isEqualTo(LeaseRecords.record(typed));

    Map<String, Object> renewal = LeaseRecords.lease(
        new LeaseRecord("next", 15, Instant.EPOCH, Instant.EPOCH, 4, "42"), handOver, "ns", "lease");
    Lease renewed = JSON.unmarshal(JSON.asJson(renewal), Lease.class);
    assertThat(renewed.getMetadata().getAnnotations()).doesNotContainKey(LeaseRecords.HAND_OVER_PROOF)
        .containsEntry("owner", "ops@example.com");
    assertThat(LeaseRecords.record(renewal).handOverProof()).isNull();
    assertThat(LeaseRecords.record(handOver).handOverProof()).as("the Lease as seen is not changed").isEqualTo("55");

    Map<String, Object> bare = LeaseRecords.lease(
        new LeaseRecord("next", 15, Instant.EPOCH, Instant.EPOCH, 4, "42"), LeaseRecords.lease(
            new LeaseRecord("next", 15, Instant.EPOCH, Instant.EPOCH, 4, "41", "55"), null, "ns", "lease"),
        "ns", "lease");
    assertThat(JSON.unmarshal(JSON.asJson(bare), Lease.class).getMetadata().getAnnotations())
        .as("no annotations left: none written").isNullOrEmpty();
  }

  @Test
  void timesInAnyRfc3339FormAreRead() {
    Map<String, Object> lease = lease(Map.of("holderIdentity", "a", "acquireTime", "2026-01-01T01:00:00+01:00",
        "renewTime", "2026-01-01T00:00:00.5Z"));

    LeaseRecord record = LeaseRecords.record(lease);

    assertThat(record.acquireTime()).isEqualTo(Instant.parse("2026-01-01T00:00:00Z"));
    assertThat(record.renewTime()).isEqualTo(Instant.parse("2026-01-01T00:00:00.500Z"));
  }

  /**
   * Stricter than the typed model (h-attack9): it reads {@code "15"} as 15, {@code 3} as the holder {@code "3"} and
   * {@code 5} as a time; a real API server refuses to store any of these.
   */
  @Test
  void aFieldOfTheWrongTypeIsNoLease() {
    String quoted = "{\"metadata\":{\"name\":\"lease\",\"resourceVersion\":\"9\"},"
        + "\"spec\":{\"leaseDurationSeconds\":\"15\"}}";
    assertThat(LeaseRecords.record(JSON.unmarshal(quoted, Lease.class)).leaseDurationSeconds())
        .as("what the typed model makes of it").isEqualTo(15);
    for (Map<String, Object> spec : List.<Map<String, Object>>of(Map.of("holderIdentity", 3),
        Map.of("leaseDurationSeconds", "15"), Map.of("leaseDurationSeconds", 1.5),
        Map.of("leaseTransitions", 1L << 40), Map.of("renewTime", "yesterday"), Map.of("acquireTime", 5))) {
      assertThatThrownBy(() -> LeaseRecords.record(lease(spec))).as("%s", spec)
          .isInstanceOf(IllegalStateException.class).hasMessageStartingWith("the Lease's ");
    }
    Map<String, Object> specNoObject = new LinkedHashMap<>(lease(Map.of()));
    specNoObject.put("spec", List.of());
    assertThatThrownBy(() -> LeaseRecords.record(specNoObject)).isInstanceOf(IllegalStateException.class)
        .hasMessage("the Lease's spec is not an object: []");
  }

  @Test
  void aLeaseWithoutASpecIsFreeAndANewRecordIsANewLease() {
    assertThat(LeaseRecords.record(Map.of("metadata", Map.of("name", "lease", "resourceVersion", "1"))))
        .isEqualTo(new LeaseRecord(null, null, null, null, null, "1"));
    Map<String, Object> created = LeaseRecords.lease(new LeaseRecord("a", 5, null, null, null, null),
        lease(Map.of()), "ns", "lease");
    assertThat(created).isEqualTo(Map.of("apiVersion", "coordination.k8s.io/v1", "kind", "Lease",
        "metadata", Map.of("name", "lease", "namespace", "ns"),
        "spec", Map.of("holderIdentity", "a", "leaseDurationSeconds", 5)));
  }

  private static Map<String, Object> lease(Map<String, Object> spec) {
    Map<String, Object> lease = new LinkedHashMap<>();
    lease.put("metadata", Map.of("name", "lease", "namespace", "ns", "resourceVersion", "9", "uid", "u"));
    lease.put("spec", spec);
    return lease;
  }

  private static Lease typedLease(LeaseRecord record) {
    return new LeaseBuilder()
        .withNewMetadata().withName("lease").withNamespace("ns").endMetadata()
        .withNewSpec().withHolderIdentity(record.holder() == null ? "" : record.holder())
        .withLeaseDurationSeconds(record.leaseDurationSeconds())
        .withAcquireTime(record.acquireTime().atZone(ZoneOffset.UTC))
        .withRenewTime(record.renewTime().atZone(ZoneOffset.UTC))
        .withLeaseTransitions(record.leaseTransitions()).endSpec()
        .build();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> withVersion(String json, String version) {
    return JSON.unmarshal(jsonWithVersion(json, version), Map.class);
  }

  private static String jsonWithVersion(String json, String version) {
    return json.replace("\"metadata\":{", "\"metadata\":{\"resourceVersion\":\"" + version + "\",");
  }

  private static Instant micros(Instant t) {
    return t.truncatedTo(java.time.temporal.ChronoUnit.MICROS);
  }
}
