package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Between a Lease and the protocol's {@link LeaseRecord}: the only place that maps them. The Lease requests read and
 * write the Lease untyped, as the JSON object the server sends ({@code Map}s, lists and scalars): fabric8's typed
 * model costs its (de)serializers' first build, tens of milliseconds on the first election of a JVM, and a write of
 * the object as read keeps every field of it, known to the model or not. The watch's events come typed, through
 * fabric8's watch ({@link #record(Lease)}).
 */
final class LeaseRecords {

  /**
   * The annotation of a hand-over's term ({@link LeaseRecord#handOverProof}): the resourceVersion of the successor's
   * membership Lease that the old owner saw before it wrote the term. A write of a record without it removes it.
   */
  static final String HAND_OVER_PROOF = "election-policy.io/hand-over-proof";

  private LeaseRecords() {}

  /** The protocol's view of a Lease as fabric8's model holds it. */
  static LeaseRecord record(Lease lease) {
    LeaseSpec spec = lease.getSpec() == null ? new LeaseSpec() : lease.getSpec();
    return new LeaseRecord(spec.getHolderIdentity(), spec.getLeaseDurationSeconds(),
        spec.getAcquireTime() == null ? null : spec.getAcquireTime().toInstant(),
        spec.getRenewTime() == null ? null : spec.getRenewTime().toInstant(), spec.getLeaseTransitions(),
        lease.getMetadata() == null ? null : lease.getMetadata().getResourceVersion(),
        lease.getMetadata() == null || lease.getMetadata().getAnnotations() == null ? null
            : lease.getMetadata().getAnnotations().get(HAND_OVER_PROOF));
  }

  /**
   * The protocol's view of a Lease read untyped. A field of the wrong JSON type (a holder that is no string, a
   * duration that is a quoted number, a time that is no RFC 3339 string) is an {@link IllegalStateException}: the
   * answer is no Lease, and the call fails. That is stricter than fabric8's typed model, which coerces such scalars
   * as Jackson does ({@code "15"} read as 15, {@code 3} as the holder {@code "3"}, a number as seconds since the
   * epoch), and deliberately so: a real API server decodes a Lease into its typed fields and refuses such a write,
   * so only a store that keeps JSON as written (a mock) can hold one, and a guess at what it means is no ground for
   * a take. Times are read in any RFC 3339 form, where the typed model takes exactly six fraction digits and
   * {@code Z} (found by h-attack9).
   */
  static LeaseRecord record(Map<String, Object> lease) {
    Map<String, Object> spec = object(lease, "spec");
    return new LeaseRecord(string(spec, "holderIdentity"), integer(spec, "leaseDurationSeconds"),
        time(spec, "acquireTime"), time(spec, "renewTime"), integer(spec, "leaseTransitions"),
        resourceVersion(lease), string(object(object(lease, "metadata"), "annotations"), HAND_OVER_PROOF));
  }

  /** The Lease's {@code metadata.name}, {@code null} if it has none. */
  static String name(Map<String, Object> lease) {
    return string(object(lease, "metadata"), "name");
  }

  /** The Lease's {@code metadata.resourceVersion}, {@code null} if it has none. */
  static String resourceVersion(Map<String, Object> lease) {
    return string(object(lease, "metadata"), "resourceVersion");
  }

  /** The Lease's {@code metadata.uid}, {@code null} if it has none (or no Lease was seen). */
  static String uid(Map<String, Object> lease) {
    return lease == null ? null : string(object(lease, "metadata"), "uid");
  }

  /**
   * The Lease to write for a record: the last one seen ({@code lastSeen}, may be null) with its spec replaced,
   * so labels, annotations, owner references and any other field a user or the server put on it survive; an empty
   * holder for none, as client-go writes it. A record without a resourceVersion is a new Lease named {@code name}.
   * Never changes {@code lastSeen}, which other threads may read.
   */
  static Map<String, Object> lease(LeaseRecord record, Map<String, Object> lastSeen, String namespace,
      String name) {
    return lease(record, lastSeen, namespace, name, Map.of(), Map.of());
  }

  /**
   * {@link #lease(LeaseRecord, Map, String, String)} with {@code labels} and {@code annotations} put in its metadata
   * (over the values of the same keys; the others kept): the sharded runner's label, which its list and watch
   * selects by, and a member's leaving mark.
   */
  static Map<String, Object> lease(LeaseRecord record, Map<String, Object> lastSeen, String namespace,
      String name, Map<String, String> labels, Map<String, String> annotations) {
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("holderIdentity", record.holder() == null ? "" : record.holder());
    putIfSet(spec, "leaseDurationSeconds", record.leaseDurationSeconds());
    putIfSet(spec, "acquireTime", record.acquireTime() == null ? null : MicroTimes.format(record.acquireTime()));
    putIfSet(spec, "renewTime", record.renewTime() == null ? null : MicroTimes.format(record.renewTime()));
    putIfSet(spec, "leaseTransitions", record.leaseTransitions());
    Map<String, Object> lease = new LinkedHashMap<>();
    Map<String, Object> metadata = new LinkedHashMap<>();
    if (record.resourceVersion() == null || lastSeen == null || !(lastSeen.get("metadata") instanceof Map)) {
      lease.put("apiVersion", "coordination.k8s.io/v1");
      lease.put("kind", "Lease");
      metadata.put("name", name);
      metadata.put("namespace", namespace);
    } else {
      lease.putAll(lastSeen);
      metadata.putAll(object(lastSeen, "metadata"));
    }
    putIfSet(metadata, "resourceVersion", record.resourceVersion());
    merge(metadata, "labels", labels);
    merge(metadata, "annotations", annotations);
    handOverProof(metadata, record.handOverProof());
    lease.put("metadata", metadata);
    lease.put("spec", spec);
    return lease;
  }

  /**
   * A hand-over's proof in {@code metadata}'s annotations, or none: the successor's first renewal, and every write
   * after it, drops the annotation the hand-over wrote. Copies the annotations, which may be the last seen Lease's.
   */
  private static void handOverProof(Map<String, Object> metadata, String proof) {
    Map<String, Object> present = object(metadata, "annotations");
    if (proof == null && (present == null || !present.containsKey(HAND_OVER_PROOF))) {
      return;
    }
    Map<String, Object> annotations = new LinkedHashMap<>();
    if (present != null) {
      annotations.putAll(present);
    }
    if (proof == null) {
      annotations.remove(HAND_OVER_PROOF);
    } else {
      annotations.put(HAND_OVER_PROOF, proof);
    }
    if (annotations.isEmpty()) {
      metadata.remove("annotations");
    } else {
      metadata.put("annotations", annotations);
    }
  }

  /** Puts {@code entries} in a copy of {@code metadata}'s map {@code key} (made if missing). */
  private static void merge(Map<String, Object> metadata, String key, Map<String, String> entries) {
    if (entries.isEmpty()) {
      return;
    }
    Map<String, Object> merged = new LinkedHashMap<>();
    Map<String, Object> present = object(metadata, key);
    if (present != null) {
      merged.putAll(present);
    }
    merged.putAll(entries);
    metadata.put(key, merged);
  }

  private static void putIfSet(Map<String, Object> map, String key, Object value) {
    if (value != null) {
      map.put(key, value);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(Map<String, Object> map, String key) {
    Object value = map == null ? null : map.get(key);
    if (value == null || value instanceof Map) {
      return (Map<String, Object>) value;
    }
    throw wrongType(key, value, "an object");
  }

  private static String string(Map<String, Object> map, String key) {
    Object value = map == null ? null : map.get(key);
    if (value == null || value instanceof String) {
      return (String) value;
    }
    throw wrongType(key, value, "a string");
  }

  private static Integer integer(Map<String, Object> map, String key) {
    Object value = map == null ? null : map.get(key);
    if (value == null) {
      return null;
    }
    if (value instanceof Integer || value instanceof Long || value instanceof Short || value instanceof Byte) {
      long n = ((Number) value).longValue();
      if (n == (int) n) {
        return (int) n;
      }
    }
    throw wrongType(key, value, "a 32-bit integer");
  }

  private static Instant time(Map<String, Object> map, String key) {
    String value = string(map, key);
    if (value == null) {
      return null;
    }
    try {
      return MicroTimes.parse(value);
    } catch (DateTimeParseException e) {
      throw wrongType(key, value, "an RFC 3339 time");
    }
  }

  private static IllegalStateException wrongType(String key, Object value, String expected) {
    String shown = String.valueOf(value);
    return new IllegalStateException("the Lease's " + key + " is not " + expected + ": "
        + (shown.length() > 100 ? shown.substring(0, 100) + "..." : shown));
  }
}
