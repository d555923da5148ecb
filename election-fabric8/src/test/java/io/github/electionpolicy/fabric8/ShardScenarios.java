package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * The views {@link ShardPlanner} is checked on: jqwik arbitraries (which shrink, towards fewer shards, fewer members
 * and shards held by the first member) for the properties, and the same kinds of views from a seeded
 * {@link Random} for the broken variants, whose test must not depend on a run's seed.
 */
final class ShardScenarios {

  static final int MAX_SHARDS = 40;
  static final int MAX_MEMBERS = 7;

  private ShardScenarios() {}

  static Arbitrary<List<String>> members() {
    return Arbitraries.strings().withCharRange('a', 'f').ofMinLength(1).ofMaxLength(2)
        .set().ofMinSize(1).ofMaxSize(MAX_MEMBERS).map(set -> new ArrayList<>(new TreeSet<>(set)));
  }

  /** Any view: each shard free, held by a live member or by a departed holder. */
  static Arbitrary<ShardView> anyView() {
    return members().flatMap(members -> Arbitraries.integers().between(1, MAX_SHARDS).flatMap(shards ->
        Arbitraries.integers().between(-2, members.size() - 1).list().ofSize(shards)
            .map(holders -> view(members, holders))));
  }

  /** A fair view: every shard held by a live member, each holding floor(S/M) or ceil(S/M). */
  static Arbitrary<ShardView> fairView() {
    return members().flatMap(members -> Arbitraries.integers().between(1, MAX_SHARDS).flatMap(shards ->
        Combinators.combine(Arbitraries.shuffle(range(shards)), Arbitraries.shuffle(members))
            .as((order, ranked) -> fair(members, order, ranked))));
  }

  static ShardView view(List<String> members, List<Integer> holders) {
    Map<Integer, String> owners = new TreeMap<>();
    for (int shard = 0; shard < holders.size(); shard++) {
      int holder = holders.get(shard);
      if (holder >= 0) {
        owners.put(shard, members.get(holder));
      } else if (holder == -2) {
        owners.put(shard, ShardView.DEPARTED);
      }
    }
    return new ShardView(holders.size(), members, owners);
  }

  /** Deals the shards in {@code order}: the first S % M members of {@code ranked} get one more. */
  static ShardView fair(List<String> members, List<Integer> order, List<String> ranked) {
    int floor = order.size() / ranked.size();
    int extra = order.size() % ranked.size();
    Map<Integer, String> owners = new TreeMap<>();
    int next = 0;
    for (int i = 0; i < ranked.size(); i++) {
      for (int n = 0; n < floor + (i < extra ? 1 : 0); n++) {
        owners.put(order.get(next++), ranked.get(i));
      }
    }
    return new ShardView(order.size(), members, owners);
  }

  static List<Integer> range(int shards) {
    List<Integer> all = new ArrayList<>();
    for (int shard = 0; shard < shards; shard++) {
      all.add(shard);
    }
    return all;
  }

  /** A member that is not in {@code view}'s live set, sorting anywhere among them. */
  static String newcomer(ShardView view, String candidate) {
    String name = candidate;
    while (view.live().contains(name)) {
      name = name + "+";
    }
    return name;
  }

  static List<String> members(Random random) {
    Set<String> names = new TreeSet<>();
    int size = 1 + random.nextInt(MAX_MEMBERS);
    while (names.size() < size) {
      names.add(name(random));
    }
    return new ArrayList<>(names);
  }

  static String name(Random random) {
    StringBuilder name = new StringBuilder().append((char) ('a' + random.nextInt(6)));
    if (random.nextBoolean()) {
      name.append((char) ('a' + random.nextInt(6)));
    }
    return name.toString();
  }

  static ShardView anyView(Random random) {
    List<String> members = members(random);
    List<Integer> holders = new ArrayList<>();
    int shards = 1 + random.nextInt(MAX_SHARDS);
    for (int shard = 0; shard < shards; shard++) {
      holders.add(random.nextInt(members.size() + 2) - 2);
    }
    return view(members, holders);
  }

  static ShardView fairView(Random random) {
    List<String> members = members(random);
    List<Integer> order = range(1 + random.nextInt(MAX_SHARDS));
    Collections.shuffle(order, random);
    List<String> ranked = new ArrayList<>(members);
    Collections.shuffle(ranked, random);
    return fair(members, order, ranked);
  }
}
