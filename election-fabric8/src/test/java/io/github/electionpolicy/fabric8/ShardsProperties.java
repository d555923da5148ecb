package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.constraints.IntRange;

/**
 * {@link Shards}' arithmetic against a reference in {@link BigInteger} that follows the definitions literally:
 * shard {@code i} of {@code n} is {@code [floor(2^64 * i / n), floor(2^64 * (i + 1) / n))}, and a hash is in the shard
 * whose range holds it (found by binary search over those bounds), for every count and every hash, the bounds and
 * their neighbours included.
 */
class ShardsProperties {

  private static final BigInteger SPACE = BigInteger.ONE.shiftLeft(64);

  /** The reference bound: floor(2^64 * shard / count). */
  static BigInteger referenceStart(int shard, int count) {
    return SPACE.multiply(BigInteger.valueOf(shard)).divide(BigInteger.valueOf(count));
  }

  /** The reference shard: the last shard whose start is at most the hash, by binary search. */
  static int referenceShard(long hash, int count) {
    BigInteger h = unsigned(hash);
    int low = 0;
    int high = count - 1;
    while (low < high) {
      int mid = (low + high + 1) >>> 1;
      if (referenceStart(mid, count).compareTo(h) <= 0) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    return low;
  }

  static BigInteger unsigned(long value) {
    return new BigInteger(Long.toUnsignedString(value));
  }

  /** The reference FNV-1a 64: the definition, in BigInteger modulo 2^64. */
  static long referenceHash(String key) {
    BigInteger hash = new BigInteger("cbf29ce484222325", 16);
    BigInteger prime = new BigInteger("100000001b3", 16);
    for (byte b : key.getBytes(StandardCharsets.UTF_8)) {
      hash = hash.xor(BigInteger.valueOf(b & 0xff)).multiply(prime).mod(SPACE);
    }
    return hash.longValue();
  }

  @Provide
  Arbitrary<Integer> counts() {
    return Arbitraries.oneOf(Arbitraries.integers().between(1, Shards.MAX_COUNT),
        Arbitraries.of(1, 2, 3, 5, 7, 16, 64, 100, 1000, 4095, Shards.MAX_COUNT));
  }

  @Provide
  Arbitrary<Long> hashes() {
    return Arbitraries.oneOf(Arbitraries.longs(),
        Arbitraries.of(0L, 1L, -1L, -2L, Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE + 1));
  }

  /** A count, a shard of it, and a hash at or next to that shard's start. */
  @Provide
  Arbitrary<Tuple.Tuple3<Integer, Integer, Long>> boundaries() {
    return counts().flatMap(count -> Combinators.combine(
        Arbitraries.integers().between(0, count - 1), Arbitraries.of(-1L, 0L, 1L))
        .as((shard, offset) -> Tuple.of(count, shard, referenceStart(shard, count).longValue() + offset)));
  }

  @Property(tries = 2000)
  void shardOfAHashIsTheReferenceShard(@ForAll("counts") int count, @ForAll("hashes") long hash) {
    assertThat(Shards.of(count).shardOfHash(hash)).isEqualTo(referenceShard(hash, count));
  }

  @Property(tries = 2000)
  void shardOfAHashAtOrNextToABoundIsTheReferenceShard(
      @ForAll("boundaries") Tuple.Tuple3<Integer, Integer, Long> boundary) {
    int count = boundary.get1();
    long hash = boundary.get3();
    assertThat(Shards.of(count).shardOfHash(hash)).isEqualTo(referenceShard(hash, count));
  }

  @Property(tries = 300)
  void theRangesPartitionTheWholeSpaceWithoutGapOrOverlap(@ForAll("counts") int count) {
    Shards shards = Shards.of(count);
    assertThat(shards.range(0).start()).isZero();
    assertThat(shards.range(count - 1).end()).isEqualTo(SPACE);
    for (int shard = 0; shard < count; shard++) {
      Shards.Range range = shards.range(shard);
      assertThat(unsigned(range.start())).isEqualTo(referenceStart(shard, count));
      assertThat(range.end()).isEqualTo(referenceStart(shard + 1, count));
      assertThat(Long.compareUnsigned(range.start(), range.last())).as("shard %d is not empty", shard)
          .isLessThanOrEqualTo(0);
      if (shard > 0) {
        assertThat(range.start()).isEqualTo(shards.range(shard - 1).last() + 1);
      }
    }
  }

  @Property(tries = 1000)
  void aHashIsInTheRangeOfItsShardAndInNoOther(@ForAll("counts") int count, @ForAll("hashes") long hash) {
    Shards shards = Shards.of(count);
    int shard = shards.shardOfHash(hash);
    assertThat(shards.range(shard).contains(hash)).isTrue();
    if (shard > 0) {
      assertThat(shards.range(shard - 1).contains(hash)).isFalse();
    }
    if (shard < count - 1) {
      assertThat(shards.range(shard + 1).contains(hash)).isFalse();
    }
  }

  @Property(tries = 1000)
  void aKeyIsInTheRangeOfItsShard(@ForAll("counts") int count, @ForAll String key) {
    Shards shards = Shards.of(count);
    assertThat(shards.range(shards.shardOf(key)).contains(Shards.hash(key))).isTrue();
    assertThat(shards.shardOfNamespace(key)).isEqualTo(shards.shardOf(key));
  }

  @Property(tries = 1000)
  void hashIsTheReferenceFnv1a(@ForAll String key) {
    assertThat(Shards.hash(key)).isEqualTo(referenceHash(key));
  }

  /** A count and a non-empty set of its shards, as a list with repeats and in any order. */
  @Provide
  Arbitrary<Tuple.Tuple2<Integer, List<Integer>>> ownedShards() {
    return Arbitraries.oneOf(Arbitraries.integers().between(1, 64), counts()).flatMap(count ->
        Arbitraries.integers().between(0, count - 1).list().ofMinSize(1).ofMaxSize(Math.min(2 * count, 64))
            .map(shards -> Tuple.of(count, shards)));
  }

  private static final Pattern RANGE =
      Pattern.compile("shardRange\\(object\\.metadata\\.uid, '0x([0-9a-f]{16,17})', '0x([0-9a-f]{16,17})'\\)");

  /**
   * The selector for several shards, read back as the API server reads it (the terms joined by {@code ||}, each
   * start inclusive and end exclusive), selects a hash exactly when the hash's shard is one of them; its ranges are
   * in ascending order, none empty, none touching the next (consecutive shards merged).
   */
  @Property(tries = 1000)
  void theSelectorForSeveralShardsSelectsExactlyTheirHashes(
      @ForAll("ownedShards") Tuple.Tuple2<Integer, List<Integer>> owned, @ForAll("hashes") long hash) {
    int count = owned.get1();
    Shards shards = Shards.of(count);
    Set<Integer> set = new TreeSet<>(owned.get2());
    String[] terms = shards.selector(owned.get2(), Shards.UID_FIELD).split(" \\|\\| ");
    List<BigInteger[]> ranges = new ArrayList<>();
    for (String term : terms) {
      Matcher matcher = RANGE.matcher(term);
      assertThat(matcher.matches()).as(term).isTrue();
      ranges.add(new BigInteger[] {new BigInteger(matcher.group(1), 16), new BigInteger(matcher.group(2), 16)});
    }
    for (int i = 0; i < ranges.size(); i++) {
      assertThat(ranges.get(i)[0]).isLessThan(ranges.get(i)[1]);
      if (i > 0) {
        assertThat(ranges.get(i - 1)[1]).as("merged, in order").isLessThan(ranges.get(i)[0]);
      }
    }
    List<Long> probes = new ArrayList<>(List.of(hash));
    for (int shard : set) {
      long start = referenceStart(shard, count).longValue();
      probes.addAll(List.of(start, start - 1, referenceStart(shard + 1, count).longValue() - 1,
          referenceStart(shard + 1, count).longValue()));
    }
    for (long probe : probes) {
      BigInteger h = unsigned(probe);
      boolean selected = ranges.stream().anyMatch(r -> r[0].compareTo(h) <= 0 && h.compareTo(r[1]) < 0);
      assertThat(selected).as("hash %s", Long.toHexString(probe))
          .isEqualTo(set.contains(referenceShard(probe, count)));
    }
  }

  @Property(tries = 500)
  void theSelectorWritesTheBoundsAsTheApiServerParsesThem(@ForAll("counts") int count,
      @ForAll @IntRange(min = 0, max = Shards.MAX_COUNT - 1) int anyShard) {
    int shard = anyShard % count;
    String selector = Shards.of(count).range(shard).selector(Shards.UID_FIELD);
    String start = String.format("0x%016x", referenceStart(shard, count));
    String end = String.format("0x%016x", referenceStart(shard + 1, count));
    assertThat(selector).isEqualTo("shardRange(object.metadata.uid, '" + start + "', '" + end + "')");
    assertThat(selector).matches("shardRange\\(object\\.metadata\\.uid, '0x[0-9a-f]{16}', '0x(1?[0-9a-f]{16})'\\)");
  }
}
