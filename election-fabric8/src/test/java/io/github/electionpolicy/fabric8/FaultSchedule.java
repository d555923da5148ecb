package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Collectors;

/**
 * A seeded, random sequence of faults for the soak: the same seed always gives the same faults, holds and
 * picks. The first faults are each kind once, in a seeded order, so every kind occurs even in a short run;
 * the rest are drawn by weight. Which replica a fault hits (the leader, the n-th follower) is resolved when
 * it runs, because who leads then depends on timing.
 */
final class FaultSchedule {

  /** What happens to the cluster. */
  enum Fault {
    /** The leader closes (stops its reconcilers, releases the Lease); a new incarnation starts later. */
    GRACEFUL_CLOSE_LEADER(4),
    /** The leader dies: its connections drop, nothing is released; a new incarnation starts later. */
    CRASH_LEADER(3),
    /** The leader alone is cut off: its traffic is blackholed for a while, then restored. */
    PARTITION_LEADER(3),
    /** One follower alone is cut off for a while, then restored. */
    PARTITION_FOLLOWER(3),
    /** Every replica loses the API server (connections refused, or hanging), then it returns. */
    API_OUTAGE(3),
    /** Someone else updates the Lease without changing its holder, so the holder's next write conflicts. */
    FOREIGN_WRITE(4);

    final int weight;

    Fault(int weight) {
      this.weight = weight;
    }
  }

  /**
   * One fault and its seeded parameters.
   *
   * @param index the position in the schedule, from 1
   * @param fault what happens
   * @param hold how long a partition or outage lasts, or how long a closed or crashed replica stays down
   * @param followerPick which follower a follower partition hits, modulo the number of followers
   * @param hang for an outage: whether connections hang (true) or are refused (false)
   * @param writes for a foreign write: how many updates in a burst
   * @param touchRenewTime for a foreign write: whether it also moves renewTime (a spec change followers see)
   */
  record Event(int index, Fault fault, Duration hold, int followerPick, boolean hang, int writes,
      boolean touchRenewTime) {

    @Override
    public String toString() {
      switch (fault) {
        case API_OUTAGE:
          return "#" + index + " " + fault + "(" + (hang ? "hang" : "refuse") + ", " + hold.toMillis() + "ms)";
        case FOREIGN_WRITE:
          return "#" + index + " " + fault + "(" + writes + " write(s)" + (touchRenewTime ? ", renewTime" : "")
              + ")";
        case PARTITION_FOLLOWER:
          return "#" + index + " " + fault + "(follower " + followerPick + ", " + hold.toMillis() + "ms)";
        default:
          return "#" + index + " " + fault + "(" + hold.toMillis() + "ms)";
      }
    }
  }

  private final long seed;
  private final List<Event> events;

  private FaultSchedule(long seed, List<Event> events) {
    this.seed = seed;
    this.events = List.copyOf(events);
  }

  static FaultSchedule generate(long seed, int count) {
    Random random = new Random(seed);
    List<Fault> kinds = new ArrayList<>(List.of(Fault.values()));
    Collections.shuffle(kinds, random);
    List<Event> events = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      Fault fault = i < kinds.size() ? kinds.get(i) : draw(random);
      events.add(parameters(i + 1, fault, random));
    }
    return new FaultSchedule(seed, events);
  }

  private static Fault draw(Random random) {
    int total = 0;
    for (Fault fault : Fault.values()) {
      total += fault.weight;
    }
    int pick = random.nextInt(total);
    for (Fault fault : Fault.values()) {
      pick -= fault.weight;
      if (pick < 0) {
        return fault;
      }
    }
    throw new IllegalStateException("weights do not add up");
  }

  private static Event parameters(int index, Fault fault, Random random) {
    // Holds span both sides of the renew deadline (1.5 s), the lease duration (2 s) and the liveness
    // budget (3.5 s), so readiness and liveness are sampled on both sides of each bound.
    Duration hold;
    switch (fault) {
      case GRACEFUL_CLOSE_LEADER:
      case CRASH_LEADER:
        hold = Duration.ofMillis(random.nextInt(1000));
        break;
      case PARTITION_LEADER:
        hold = Duration.ofMillis(800 + random.nextInt(3400));
        break;
      case PARTITION_FOLLOWER:
      case API_OUTAGE:
        hold = Duration.ofMillis(500 + random.nextInt(4000));
        break;
      default:
        hold = Duration.ofMillis(random.nextInt(150));
    }
    return new Event(index, fault, hold, random.nextInt(2), random.nextBoolean(), 1 + random.nextInt(4),
        random.nextBoolean());
  }

  long seed() {
    return seed;
  }

  List<Event> events() {
    return events;
  }

  /** How many events of each kind, for the report. */
  Map<Fault, Long> counts() {
    Map<Fault, Long> counts = new EnumMap<>(Fault.class);
    counts.putAll(events.stream().collect(Collectors.groupingBy(Event::fault, Collectors.counting())));
    return counts;
  }
}
