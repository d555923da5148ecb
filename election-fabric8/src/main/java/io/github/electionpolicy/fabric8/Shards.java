package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.github.electionpolicy.InvalidElectionSettingException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Locale;
import java.util.Objects;
import java.util.StringJoiner;
import java.util.TreeSet;

/**
 * A fixed number of shards of a controller's work and the map from an object to its shard, the same as the
 * Kubernetes API server's sharded list and watch (KEP-5866) computes it. A shard is a range of a 64-bit FNV-1a
 * hash; {@link Range#selector(String)} writes it as the API server's {@code shardRange(...)} expression, so that
 * a controller can either push a shard down to an API server that filters (fabric8 8's
 * {@code withShardSelector(String)}, Kubernetes 1.36 with the alpha gate on) or filter on the client with
 * {@link #shardOf(HasMetadata)} where it does not (older servers, fabric8 7).
 *
 * <pre>{@code
 * Shards shards = Shards.of(16);
 * int shard = shards.shardOf(pod);                         // by metadata.uid, 0..15
 * boolean mine = ownedShards.contains(shard);
 *
 * // on fabric8 8 and an API server with sharded list and watch:
 * String selector = shards.range(3).selector(Shards.UID_FIELD);
 * // shardRange(object.metadata.uid, '0x3000000000000000', '0x4000000000000000')
 * client.pods().inNamespace("shop").withShardSelector(selector).inform(handler);
 * // or one selector for every shard this replica owns:
 * String owned = shards.selector(ownedShards, Shards.UID_FIELD);
 * }</pre>
 *
 * <h2>What the API server does, and where that was read</h2>
 * <ul>
 *   <li><b>Hash</b>: 64-bit FNV-1a (offset basis {@code 0xcbf29ce484222325}, prime {@code 0x100000001b3}) over the
 *     bytes of the field's value, {@code object.metadata.uid} or {@code object.metadata.namespace}; nothing else
 *     (no separator, no field name). Source: {@code k8s.io/apimachinery/pkg/sharding} ({@code HashField} and
 *     {@code HashFieldValue}: Go's {@code hash/fnv.New64a} over {@code []byte(value)}; {@code ResolveFieldValue}:
 *     {@code string(GetUID())} or {@code GetNamespace()}, so a cluster-scoped object's namespace hashes as the
 *     empty string), and the Kubernetes v1.36 release blog "Server-Side Sharded List and Watch". Go strings are
 *     bytes; a Java {@code String} is hashed here as its UTF-8 bytes, which are the same bytes for every uid and
 *     namespace (both are ASCII).</li>
 *   <li><b>Range</b>: {@code shardRange(field, 'start', 'end')} matches a hash {@code h} with
 *     {@code start <= h < end}: start inclusive, end exclusive, both unsigned; the whole space is
 *     {@code [0x0000000000000000, 0x10000000000000000)}. Bounds are {@code 0x}-prefixed lower-case hexadecimal of
 *     16 digits, except the end {@code 0x10000000000000000} (2<sup>64</sup>, 17 digits) of the last range.
 *     Several ranges may be joined with {@code ||}. Source: {@code pkg/sharding/selector.go} ({@code Matches},
 *     {@code HexLess}, {@code parseBound}) and fabric8 8.0's {@code ShardRange} (its Javadoc and
 *     {@code toExpression()}: {@code String.format("0x%016x", bound)}).</li>
 *   <li><b>Split</b>: shard {@code i} of {@code n} is
 *     <code>[&lfloor;2<sup>64</sup>&middot;i/n&rfloor;, &lfloor;2<sup>64</sup>&middot;(i+1)/n&rfloor;)</code>,
 *     as fabric8 8.0's {@code ShardRange.ofShard(i, n)} (BigInteger arithmetic) and apimachinery's
 *     {@code NewShardRangeSelector(key, i, n)} split it. The ranges cover the space without gap or overlap.</li>
 * </ul>
 *
 * <p>Uncertain, or not settled upstream: the feature is alpha in Kubernetes 1.36 and the expression's syntax may
 * still change (an earlier apimachinery revision printed {@code shardRange(key,0x..,0x..)} without quotes). The
 * KEP fixes the hash and the range test, not how to split the space: for a count that is not a power of two, other
 * clients split a little differently (the apiserver's integration test uses {@code floor(2^64 / n) * i} with the last range
 * ending at 2<sup>64</sup>; a kube-state-metrics pull request uses {@code (floor((2^64 - 1) / n) + 1) * i}); those boundaries
 * differ from these by a few hash values. Within one controller only consistency matters, and every replica using
 * this class agrees; mixing this class's shards with another client's is exact only when the count is a power of
 * two.
 *
 * <p>A caveat of that hash, kept because the server has it: the shard comes from the hash's top bits, which
 * FNV-1a's last one or two steps hardly reach, so keys that differ only in their last characters share a shard
 * ({@code team-0} to {@code team-99} fall in 2 shards of 16, and in at most 6 of any count up to {@value #MAX_COUNT};
 * fabric8's mock server, which numbers uids in sequence, puts all its objects in one or two). Random uids (the API server's) spread evenly; sharding by
 * namespace spreads only as well as the namespaces' names differ before their last characters.
 *
 * <p>The count is from 1 to {@value #MAX_COUNT}: every shard will be one Lease that every replica watches, and
 * past a few thousand Leases the watch and the fair-share arithmetic cost more than sharding saves.
 *
 * <p>Instances are immutable and thread-safe.
 */
public final class Shards {

  /** The most shards a controller may have. */
  public static final int MAX_COUNT = 4096;

  /** The field path of an object's uid in a {@code shardRange(...)} expression: {@value}. */
  public static final String UID_FIELD = "object.metadata.uid";

  /** The field path of an object's namespace in a {@code shardRange(...)} expression: {@value}. */
  public static final String NAMESPACE_FIELD = "object.metadata.namespace";

  private static final long FNV_OFFSET_BASIS = 0xcbf29ce484222325L;
  private static final long FNV_PRIME = 0x100000001b3L;
  private static final BigInteger SPACE = BigInteger.ONE.shiftLeft(64);
  private static final BigInteger MASK = SPACE.subtract(BigInteger.ONE);

  private final int count;

  private Shards(int count) {
    this.count = count;
  }

  /**
   * The shards of a controller's work.
   *
   * @param count how many shards: from 1 to {@value #MAX_COUNT}; every replica of the controller must use the same
   * @return the shards
   * @throws InvalidElectionSettingException when {@code count} is out of range; the message names
   *     {@code shardCount}
   */
  public static Shards of(int count) {
    if (count < 1 || count > MAX_COUNT) {
      throw new InvalidElectionSettingException("shardCount", Integer.toString(count),
          "a whole number from 1 to " + MAX_COUNT + ", e.g. 16 (a power of two matches every other client's split)",
          "pass the same shard count, at least 1 and at most " + MAX_COUNT + ", to every replica");
    }
    return new Shards(count);
  }

  /**
   * The number of shards.
   *
   * @return from 1 to {@value #MAX_COUNT}
   */
  public int count() {
    return count;
  }

  /**
   * The 64-bit FNV-1a hash of a key's UTF-8 bytes, as the API server hashes a field's value.
   *
   * @param key the value, e.g. an object's uid
   * @return the hash, an unsigned 64-bit number in a {@code long} (compare with
   *     {@link Long#compareUnsigned(long, long)}, print with {@link Long#toHexString(long)})
   */
  public static long hash(String key) {
    byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
    long hash = FNV_OFFSET_BASIS;
    for (byte b : bytes) {
      hash ^= b & 0xff;
      hash *= FNV_PRIME;
    }
    return hash;
  }

  /**
   * The shard whose range holds a hash.
   *
   * @param hash an unsigned 64-bit hash, e.g. from {@link #hash(String)}
   * @return the shard, from 0 to {@code count() - 1}
   */
  public int shardOfHash(long hash) {
    // Shard i starts at floor(2^64 * i / n), so h lies in shard floor((h * n + n - 1) / 2^64): the high 64 bits of
    // the unsigned 128-bit h * n + (n - 1).
    long n = count;
    long high = Math.multiplyHigh(hash, n) + ((hash >> 63) & n);
    long low = hash * n;
    long sum = low + (n - 1);
    if (Long.compareUnsigned(sum, low) < 0) {
      high++;
    }
    return (int) high;
  }

  /**
   * The shard of a key: the shard whose range holds {@link #hash(String) hash(key)}.
   *
   * @param key the value hashed, e.g. an object's uid or its namespace
   * @return the shard, from 0 to {@code count() - 1}
   */
  public int shardOf(String key) {
    return shardOfHash(hash(key));
  }

  /**
   * The shard of an object by its {@code metadata.uid}, as {@code shardRange(object.metadata.uid, ...)} selects it.
   *
   * <p>An object without a uid has not been read from the API server (it was built locally): the server would put
   * every such object in the shard of the empty string, which is never what a caller means, so it is refused.
   *
   * @param object an object read from the API server
   * @return the shard, from 0 to {@code count() - 1}
   * @throws IllegalArgumentException when the object has no metadata or no uid
   */
  public int shardOf(HasMetadata object) {
    ObjectMeta metadata = object.getMetadata();
    String uid = metadata == null ? null : metadata.getUid();
    if (uid == null || uid.isEmpty()) {
      throw new IllegalArgumentException("metadata.uid=" + (uid == null ? "<missing>" : "\"\"")
          + " of " + object.getKind() + " " + (metadata == null ? "<no metadata>" : metadata.getName())
          + " is not valid: accepted values are the uid the API server gave the object; fix: shard objects read"
          + " from the API server (an informer's or a list's), or use shardOf(key) with a key of your own");
    }
    return shardOf(uid);
  }

  /**
   * The shard of a namespace, as {@code shardRange(object.metadata.namespace, ...)} selects its objects: for
   * sharding a controller by namespace, so that one replica handles all of a namespace's objects. Namespaces that
   * differ only in their last characters ({@code team-1}, {@code team-2}) share a shard, as on the API server: see
   * the class's caveat.
   *
   * @param namespace the namespace's name; the empty string for cluster-scoped objects, as the API server hashes
   *     their (absent) namespace
   * @return the shard, from 0 to {@code count() - 1}
   * @throws NullPointerException when {@code namespace} is null (fabric8's namespace of a cluster-scoped object: pass
   *     the empty string)
   */
  public int shardOfNamespace(String namespace) {
    // fabric8 reads a cluster-scoped object's namespace as null, where the API server hashes "".
    Objects.requireNonNull(namespace, "namespace=null is not valid: accepted values are a namespace's name, or \"\""
        + " for a cluster-scoped object; fix: pass \"\" where getMetadata().getNamespace() is null, as the API server"
        + " hashes a cluster-scoped object's namespace");
    return shardOf(namespace);
  }

  /**
   * The hash range of a shard.
   *
   * @param shard from 0 to {@code count() - 1}
   * @return its range
   * @throws IndexOutOfBoundsException when {@code shard} is not a shard of these
   */
  public Range range(int shard) {
    Objects.checkIndex(shard, count);
    return new Range(shard, count, startOf(shard, count), startOf(shard + 1, count) - 1);
  }

  /**
   * The API server's shard selector for several shards of these, as a replica that owns them watches them with one
   * list and watch: the shards' ranges joined with {@code ||}, runs of consecutive shards merged into one range.
   *
   * <pre>{@code
   * Shards.of(16).selector(List.of(3, 4, 9), Shards.UID_FIELD)
   * // shardRange(object.metadata.uid, '0x3000000000000000', '0x5000000000000000')
   * //     || shardRange(object.metadata.uid, '0x9000000000000000', '0xa000000000000000')
   * }</pre>
   *
   * <p>An empty set is refused: the API server reads an empty shard selector as "every object", so a replica that
   * owns no shard must not list or watch at all. (How many ranges a server accepts in one selector is not written
   * down in what was read for this class; a replica's shards merge into at most half as many ranges as there are
   * shards, rounded up.)
   *
   * @param shards the shards, each from 0 to {@code count() - 1}, at least one; order and repeats do not matter
   * @param fieldPath the field hashed: {@link #UID_FIELD} or {@link #NAMESPACE_FIELD}
   * @return e.g. {@code shardRange(object.metadata.uid, '0x3000000000000000', '0x5000000000000000')}
   * @throws IllegalArgumentException when {@code shards} is empty or {@code fieldPath} is neither of the two
   * @throws IndexOutOfBoundsException when a shard is not one of these
   */
  public String selector(Collection<Integer> shards, String fieldPath) {
    Objects.requireNonNull(shards, "shards");
    checkFieldPath(fieldPath);
    TreeSet<Integer> sorted = new TreeSet<>();
    for (Integer shard : shards) {
      sorted.add(Objects.checkIndex(shard, count));
    }
    if (sorted.isEmpty()) {
      throw new IllegalArgumentException("shards=[] is not valid: accepted values are one or more shards from 0 to "
          + (count - 1) + "; fix: do not list or watch while this replica owns no shard (an empty shard selector"
          + " selects every object)");
    }
    StringJoiner ranges = new StringJoiner(" || ");
    int first = sorted.first();
    int previous = first;
    for (int shard : sorted.tailSet(first, false)) {
      if (shard != previous + 1) {
        ranges.add(expression(fieldPath, startOf(first, count), startOf(previous + 1, count) - 1));
        first = shard;
      }
      previous = shard;
    }
    ranges.add(expression(fieldPath, startOf(first, count), startOf(previous + 1, count) - 1));
    return ranges.toString();
  }

  /**
   * Refuses every field path but the two the API server hashes: any other text would go into the expression as it
   * is, to be refused by the server only when the informer lists (a typo), or to change what the selector selects
   * (text that closes the expression and adds a range of its own).
   */
  private static void checkFieldPath(String fieldPath) {
    Objects.requireNonNull(fieldPath, "fieldPath");
    if (!UID_FIELD.equals(fieldPath) && !NAMESPACE_FIELD.equals(fieldPath)) {
      throw new IllegalArgumentException("fieldPath=\"" + fieldPath + "\" is not valid: accepted values are "
          + UID_FIELD + " and " + NAMESPACE_FIELD + "; fix: pass Shards.UID_FIELD or Shards.NAMESPACE_FIELD");
    }
  }

  /** {@code shardRange(field, 'start', 'last + 1')} with the bounds as the API server parses them. */
  private static String expression(String fieldPath, long start, long last) {
    return "shardRange(" + fieldPath + ", '" + hex(unsigned(start)) + "', '" + hex(unsigned(last).add(BigInteger.ONE))
        + "')";
  }

  private static BigInteger unsigned(long value) {
    return BigInteger.valueOf(value).and(MASK);
  }

  private static String hex(BigInteger bound) {
    return String.format(Locale.ROOT, "0x%016x", bound);
  }

  /** floor(2^64 * shard / count) as an unsigned long; 0 again for {@code shard == count} (2^64 wraps). */
  private static long startOf(int shard, int count) {
    return SPACE.multiply(BigInteger.valueOf(shard)).divide(BigInteger.valueOf(count)).longValue();
  }

  /**
   * Two {@code Shards} are equal when they have the same count: they map every object to the same shard.
   *
   * @param other the object to compare with
   * @return whether {@code other} is a {@code Shards} of the same count
   */
  @Override
  public boolean equals(Object other) {
    return other instanceof Shards && ((Shards) other).count == count;
  }

  @Override
  public int hashCode() {
    return count;
  }

  /**
   * A short description for logs.
   *
   * @return e.g. {@code Shards[count=16]}
   */
  @Override
  public String toString() {
    return "Shards[count=" + count + "]";
  }

  /**
   * One shard's range of the 64-bit hash space: from {@link #start()} to {@link #last()}, both inclusive, as
   * unsigned numbers. (The exclusive end of the last shard is 2<sup>64</sup>, which no {@code long} holds; hence the
   * inclusive {@code last()}, and {@link #end()} as a {@link BigInteger} where the exclusive bound is wanted, as
   * fabric8 8's {@code ShardRange.getEnd()} gives it.)
   *
   * <pre>{@code
   * Shards.Range range = Shards.of(4).range(1);
   * range.contains(Shards.hash(uid));                  // the uid's hash is in [0x4000..., 0x8000...)
   * range.selector(Shards.UID_FIELD);
   * // shardRange(object.metadata.uid, '0x4000000000000000', '0x8000000000000000')
   * }</pre>
   *
   * <p>Instances are immutable and thread-safe.
   */
  public static final class Range {
    private final int shard;
    private final int count;
    private final long start;
    private final long last;

    private Range(int shard, int count, long start, long last) {
      this.shard = shard;
      this.count = count;
      this.start = start;
      this.last = last;
    }

    /**
     * The shard this is the range of.
     *
     * @return from 0 to {@code count() - 1}
     */
    public int shard() {
      return shard;
    }

    /**
     * The number of shards the space is split into.
     *
     * @return the count of the {@link Shards} this range is of
     */
    public int count() {
      return count;
    }

    /**
     * The first hash of the range (inclusive).
     *
     * @return an unsigned 64-bit number
     */
    public long start() {
      return start;
    }

    /**
     * The last hash of the range (inclusive).
     *
     * @return an unsigned 64-bit number; {@code 0xffffffffffffffff} ({@code -1L}) for the last shard
     */
    public long last() {
      return last;
    }

    /**
     * The exclusive end of the range, as the API server's expression writes it.
     *
     * @return {@code last() + 1}, at most 2<sup>64</sup>
     */
    public BigInteger end() {
      return unsigned(last).add(BigInteger.ONE);
    }

    /**
     * Whether a hash falls in this range.
     *
     * @param hash an unsigned 64-bit hash, e.g. from {@link Shards#hash(String)}
     * @return whether {@code start() <= hash <= last()}, unsigned
     */
    public boolean contains(long hash) {
      return Long.compareUnsigned(hash, start) >= 0 && Long.compareUnsigned(hash, last) <= 0;
    }

    /**
     * This range as the API server's shard selector, for fabric8 8's {@code withShardSelector(String)} or a list
     * request's {@code shardSelector} parameter.
     *
     * @param fieldPath the field hashed: {@link Shards#UID_FIELD} or {@link Shards#NAMESPACE_FIELD} (the two that
     *     Kubernetes 1.36 supports)
     * @return e.g. {@code shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')}
     * @throws IllegalArgumentException when {@code fieldPath} is neither of the two
     */
    public String selector(String fieldPath) {
      checkFieldPath(fieldPath);
      return expression(fieldPath, start, last);
    }

    /**
     * Two ranges are equal when they are the same shard of the same count.
     *
     * @param other the object to compare with
     * @return whether {@code other} is the range of the same shard of the same count
     */
    @Override
    public boolean equals(Object other) {
      return other instanceof Range && ((Range) other).shard == shard && ((Range) other).count == count;
    }

    @Override
    public int hashCode() {
      return 31 * count + shard;
    }

    /**
     * A short description for logs.
     *
     * @return e.g. {@code shard 1 of 4 [0x4000000000000000, 0x8000000000000000)}
     */
    @Override
    public String toString() {
      return "shard " + shard + " of " + count + " [" + hex(unsigned(start)) + ", " + hex(end()) + ")";
    }
  }
}
