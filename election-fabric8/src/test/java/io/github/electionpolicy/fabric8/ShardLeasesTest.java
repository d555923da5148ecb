package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.Set;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** The names and label of a sharded controller's Leases are valid, tell each other apart, and read back. */
class ShardLeasesTest {

  private static final Pattern LABEL_VALUE = Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");

  @Property(tries = 500)
  void everyNameIsAValidLeaseNameAndReadsBackAsWhatItIs(@ForAll("baseNames") String base,
      @ForAll @IntRange(min = 1, max = Shards.MAX_COUNT) int shardCount, @ForAll("identities") String identity) {
    ShardLeases leases = new ShardLeases(base, shardCount);

    for (int shard : new int[] {0, shardCount / 2, shardCount - 1}) {
      assertValidName(leases.shardLease(shard));
      assertThat(leases.parse(leases.shardLease(shard))).isEqualTo(new ShardLeases.Kind.Shard(shard));
    }
    String member = leases.memberLease(identity);
    assertValidName(member);
    assertThat(leases.parse(member)).isEqualTo(new ShardLeases.Kind.Member());
    assertThat(leases.labelValue()).hasSizeLessThanOrEqualTo(ShardLeases.MAX_LABEL_VALUE).matches(LABEL_VALUE);
    assertThat(leases.parse(base)).as("the base Lease itself").isEqualTo(new ShardLeases.Kind.Other());
  }

  @Property(tries = 200)
  void aValidShortIdentityIsKeptAsItIsAndOneChangedToBeValidIsTold(@ForAll("identities") String identity) {
    ShardLeases leases = new ShardLeases("orders", 16);

    String member = leases.memberLease(identity);

    if (ShardLeases.NAME_PART.matcher(identity).matches() && identity.length() <= 239) {
      assertThat(member).isEqualTo("orders-member-" + identity);
    } else {
      assertThat(member).matches("orders-member-(.*-)?[0-9a-f]{8}");
    }
  }

  @Test
  void identitiesThatDifferOnlyInWhatIsChangedGetTwoNames() {
    ShardLeases leases = new ShardLeases("orders", 16);
    Set<String> names = new HashSet<>();
    for (String identity : new String[] {"pod-a", "Pod-A", "POD-A", "pod_a", "pod a", "pod.a", "pod--a", "-pod-a",
        "p\u00f6d-a", "x".repeat(300), "x".repeat(301), "\u65e5\u672c", "\u65e5"}) {
      names.add(leases.memberLease(identity));
    }
    assertThat(names).hasSize(13);
  }

  @Test
  void aLongBaseIsCutAndHashedAlike() {
    String base = "a".repeat(253);
    ShardLeases leases = new ShardLeases(base, 4096);

    assertThat(leases.shardLease(4095)).hasSize(253).endsWith("-shard-4095");
    assertThat(leases.labelValue()).hasSize(63).matches("a{54}-[0-9a-f]{8}");
    assertThat(new ShardLeases("a".repeat(252) + "b", 4096).labelValue()).isNotEqualTo(leases.labelValue());
    assertThat(new ShardLeases("orders", 16).labelValue()).isEqualTo("orders");
  }

  @Test
  void namesOfOtherShapesAreNoneOfTheControllers() {
    ShardLeases leases = new ShardLeases("orders", 16);

    for (String name : new String[] {"orders", "orders-shard-16", "orders-shard-01", "orders-shard-", "orders-shard-x",
        "orders-shard-1.5", "orders-member-", "orders-members", "other-shard-1", "orders-shard-99999"}) {
      assertThat(leases.parse(name)).as(name).isEqualTo(new ShardLeases.Kind.Other());
    }
    assertThat(leases.parse("orders-shard-15")).isEqualTo(new ShardLeases.Kind.Shard(15));
    assertThat(leases.parse("orders-member-pod-a")).isEqualTo(new ShardLeases.Kind.Member());
  }

  @Test
  void badArgumentsAreRefusedWithWhatWouldBeAccepted() {
    assertThatThrownBy(() -> new ShardLeases("Orders", 16)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("baseLeaseName is \"Orders\"; expected a DNS-1123 subdomain of at most 253 characters");
    assertThatThrownBy(() -> new ShardLeases("a".repeat(254), 16)).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new ShardLeases("orders", 0)).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("shardCount is 0; expected 1 to 4096");
    assertThatThrownBy(() -> new ShardLeases("orders", 4097)).isInstanceOf(IllegalArgumentException.class);
    ShardLeases leases = new ShardLeases("orders", 16);
    assertThatThrownBy(() -> leases.shardLease(16)).isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> leases.memberLease("")).isInstanceOf(IllegalArgumentException.class)
        .hasMessage("identity is empty; expected the replica's identity");
    assertThatThrownBy(() -> leases.memberLease(null)).isInstanceOf(NullPointerException.class);
  }

  private static void assertValidName(String name) {
    assertThat(name).hasSizeLessThanOrEqualTo(ShardLeases.MAX_NAME).matches(ShardLeases.NAME_PART);
  }

  @Provide
  Arbitrary<String> baseNames() {
    Arbitrary<String> label = Combinators.combine(Arbitraries.strings().withChars("abz09").ofLength(1),
        Arbitraries.strings().withChars("abz09-").ofMaxLength(70), Arbitraries.strings().withChars("abz09").ofLength(1))
        .as((first, middle, last) -> middle.isEmpty() ? first : first + middle + last);
    return label.list().ofMinSize(1).ofMaxSize(5).map(labels -> String.join(".", labels))
        .filter(name -> name.length() <= ShardLeases.MAX_NAME);
  }

  @Provide
  Arbitrary<String> identities() {
    return Arbitraries.oneOf(Arbitraries.strings().ofMinLength(1).ofMaxLength(300),
        Arbitraries.strings().withChars("abc-.09XY_ ").ofMinLength(1).ofMaxLength(80),
        Arbitraries.strings().withChars("abc09").ofMinLength(1).ofMaxLength(260));
  }
}
