package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpecBuilder;
import java.time.ZoneOffset;

/** Between fabric8's {@link Lease} and the protocol's {@link LeaseRecord}: the only place that maps them. */
final class LeaseRecords {

  private LeaseRecords() {}

  /** The protocol's view of a Lease. */
  static LeaseRecord record(Lease lease) {
    LeaseSpec spec = lease.getSpec() == null ? new LeaseSpec() : lease.getSpec();
    return new LeaseRecord(spec.getHolderIdentity(), spec.getLeaseDurationSeconds(),
        spec.getAcquireTime() == null ? null : spec.getAcquireTime().toInstant(),
        spec.getRenewTime() == null ? null : spec.getRenewTime().toInstant(), spec.getLeaseTransitions(),
        lease.getMetadata() == null ? null : lease.getMetadata().getResourceVersion());
  }

  /**
   * The Lease to write for a record: the last one seen ({@code lastSeen}, may be null) with its spec replaced,
   * so labels, annotations and owner references a user put on it survive; an empty holder for none, as
   * client-go writes it. A record without a resourceVersion is a new Lease named {@code name}.
   */
  static Lease lease(LeaseRecord record, Lease lastSeen, String namespace, String name) {
    LeaseSpec spec = new LeaseSpecBuilder()
        .withHolderIdentity(record.holder() == null ? "" : record.holder())
        .withLeaseDurationSeconds(record.leaseDurationSeconds())
        .withAcquireTime(record.acquireTime() == null ? null : record.acquireTime().atZone(ZoneOffset.UTC))
        .withRenewTime(record.renewTime() == null ? null : record.renewTime().atZone(ZoneOffset.UTC))
        .withLeaseTransitions(record.leaseTransitions())
        .build();
    if (record.resourceVersion() == null || lastSeen == null || lastSeen.getMetadata() == null) {
      return new LeaseBuilder()
          .withMetadata(new ObjectMetaBuilder().withName(name).withNamespace(namespace)
              .withResourceVersion(record.resourceVersion()).build())
          .withSpec(spec)
          .build();
    }
    return new LeaseBuilder(lastSeen)
        .editMetadata().withResourceVersion(record.resourceVersion()).endMetadata()
        .withSpec(spec)
        .build();
  }
}
