package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What {@link ShardPlanner} plans from: the shard count, the live members and each held shard's holder. Written as
 * {@code S=4 live=[a, b] owners=ab-~} (one character per shard: a live member's first letter, {@code -} free,
 * {@code ~} a departed holder) when every identity is one letter, as in the step table.
 */
record ShardView(int shardCount, List<String> live, Map<Integer, String> owners) {

  /** A holder that is not a live member: one that crashed or left, whose Leases have not expired yet. */
  static final String DEPARTED = "~departed";

  ShardView {
    live = List.copyOf(live);
    owners = Collections.unmodifiableMap(new TreeMap<>(owners));
  }

  /**
   * A view from the step table's notation.
   *
   * @param live the live members, one letter each, e.g. {@code "abc"}
   * @param owners one character per shard: a member's letter, {@code -} free, {@code ~} departed
   */
  static ShardView of(String live, String owners) {
    List<String> members = new ArrayList<>();
    live.chars().forEach(c -> members.add(String.valueOf((char) c)));
    Map<Integer, String> holders = new TreeMap<>();
    for (int shard = 0; shard < owners.length(); shard++) {
      char c = owners.charAt(shard);
      if (c == '~') {
        holders.put(shard, DEPARTED);
      } else if (c != '-') {
        holders.put(shard, String.valueOf(c));
      }
    }
    return new ShardView(owners.length(), members, holders);
  }

  ShardView withLive(Collection<String> members) {
    return new ShardView(shardCount, new ArrayList<>(members), owners);
  }

  ShardView withOwners(Map<Integer, String> holders) {
    return new ShardView(shardCount, live, holders);
  }

  List<Integer> heldBy(String member) {
    List<Integer> held = new ArrayList<>();
    owners.forEach((shard, holder) -> {
      if (holder.equals(member)) {
        held.add(shard);
      }
    });
    return held;
  }

  boolean isFree(int shard) {
    return !owners.containsKey(shard);
  }

  /** Every live member holds floor(S/M) or ceil(S/M), and every shard is held by a live member. */
  boolean isFair() {
    TreeSet<String> members = new TreeSet<>(live);
    if (members.isEmpty() || owners.size() != shardCount || !members.containsAll(owners.values())) {
      return false;
    }
    int floor = shardCount / members.size();
    int ceil = floor + (shardCount % members.size() == 0 ? 0 : 1);
    return members.stream().mapToInt(m -> heldBy(m).size()).allMatch(n -> n >= floor && n <= ceil);
  }

  @Override
  public String toString() {
    StringBuilder text = new StringBuilder();
    boolean letters = live.stream().allMatch(m -> m.length() == 1)
        && owners.values().stream().allMatch(h -> h.length() == 1 || h.equals(DEPARTED));
    for (int shard = 0; shard < shardCount && letters; shard++) {
      String holder = owners.get(shard);
      text.append(holder == null ? "-" : holder.equals(DEPARTED) ? "~" : holder);
    }
    return "S=" + shardCount + " live=" + live + " owners=" + (letters ? text : owners);
  }
}
