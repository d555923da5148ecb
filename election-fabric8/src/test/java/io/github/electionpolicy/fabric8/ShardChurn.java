package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The membership churn {@link ShardCluster} runs, from a seeded {@link Random}: 1 to 4 replicas join in the first
 * steps, then up to 5 events, each at most a lease duration, a settle time and a stop apart (often at once): a join
 * (a new identity, or the restart of a crashed one at least a step after its crash), a rolling update's pod (one
 * leaves gracefully and its replacement joins in the same step), a graceful leave, a crash, or a lapse of a
 * member's membership Lease.
 */
final class ShardChurn {

  enum Kind { JOIN, LEAVE, CRASH, LAPSE }

  record Event(long step, Kind kind, String member) {}

  private ShardChurn() {}

  static List<Event> schedule(Random random) {
    List<Event> events = new ArrayList<>();
    List<String> members = new ArrayList<>();
    List<String> crashed = new ArrayList<>();
    Map<String, Long> crashedAt = new HashMap<>();
    int next = 0;
    int initial = 1 + random.nextInt(4);
    for (int i = 0; i < initial; i++) {
      String id = "r" + next++;
      members.add(id);
      events.add(new Event(random.nextInt(3), Kind.JOIN, id));
    }
    long step = 2;
    int churn = random.nextInt(6);
    for (int i = 0; i < churn; i++) {
      step += random.nextInt((int) (ShardCluster.LEASE_STEPS + ShardCluster.SETTLE_STEPS + ShardCluster.MAX_STOP_STEPS + 2));
      int pick = random.nextInt(5);
      if (members.isEmpty() || pick == 0 && members.size() < 6) {
        // A restart comes at least a step after its crash (a process takes that long to come back).
        boolean restart = !crashed.isEmpty() && random.nextBoolean() && crashedAt.get(crashed.get(0)) < step;
        String id = restart ? crashed.remove(0) : "r" + next++;
        members.add(id);
        events.add(new Event(step, Kind.JOIN, id));
      } else if (pick == 1) {
        // A rolling update's pod: one leaves, its replacement joins at once.
        events.add(new Event(step, Kind.LEAVE, members.remove(random.nextInt(members.size()))));
        String id = "r" + next++;
        members.add(id);
        events.add(new Event(step, Kind.JOIN, id));
      } else if (pick == 2) {
        events.add(new Event(step, Kind.LEAVE, members.remove(random.nextInt(members.size()))));
      } else if (pick == 3) {
        String id = members.remove(random.nextInt(members.size()));
        crashed.add(id);
        crashedAt.put(id, step);
        events.add(new Event(step, Kind.CRASH, id));
      } else {
        events.add(new Event(step, Kind.LAPSE, members.get(random.nextInt(members.size()))));
      }
    }
    return events;
  }
}
