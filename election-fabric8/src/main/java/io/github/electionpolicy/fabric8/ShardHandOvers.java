package io.github.electionpolicy.fabric8;

import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * What one replica's {@link ShardDriver} remembers of its hand-overs by name (docs/sharding.md, "How a shard is handed
 * over"): the member each closing shard runner names, whose proof follows the view until the release is written, and
 * the highest token under which a runner of this process led each shard, which a later runner is told
 * ({@link LeaseProtocol#ledBefore}) so that it takes no hand-over at or below it in, however its view lags.
 *
 * <p>Not thread-safe: the replica's loop only.
 */
final class ShardHandOvers {

  private final String identity;
  private final int shardCount;
  // The protocol of a shard's current runner, if it has one that contends.
  private final IntFunction<Optional<LeaseProtocol>> runner;
  // The protocol of the membership Lease's current runner, whose own writes a hand-over's proof names.
  private final Supplier<Optional<LeaseProtocol>> membership;
  private final TreeMap<Integer, String> successors = new TreeMap<>();
  private final TreeMap<Integer, Long> led = new TreeMap<>();

  ShardHandOvers(String identity, int shardCount, IntFunction<Optional<LeaseProtocol>> runner,
      Supplier<Optional<LeaseProtocol>> membership) {
    this.identity = identity;
    this.shardCount = shardCount;
    this.runner = runner;
    this.membership = membership;
  }

  /**
   * Before a new runner of {@code shard} starts: the hand-overs it may take in name one of this process's own membership
   * writes, those of the membership runner of the moment or of the one that ran as the runner started (a leaver's stops
   * while its decline reads the Lease: review h-decline, {@code SimulationShardingDeclineWhileReleasing}), none at or
   * below a token this process led the shard under; {@code decline}: it runs only to decline one
   * ({@link LeaseProtocol#declineHandOvers}).
   */
  void prepare(LeaseProtocol protocol, int shard, boolean decline) {
    forget(shard);
    protocol.ledBefore(ledBefore(shard));
    Optional<LeaseProtocol> atStart = membership.get();
    protocol.handOverProofs(version -> {
      OptionalLong sent = membership.get().map(writes -> writes.ownWriteSentNanos(version)).orElse(OptionalLong.empty());
      return sent.isPresent() ? sent
          : atStart.map(writes -> writes.ownWriteSentNanos(version)).orElse(OptionalLong.empty());
    });
    if (decline) {
      protocol.declineHandOvers();
    }
  }

  /** The coordinator named {@code successor} for {@code shard}, whose runner closes: its release hands the shard over. */
  void name(int shard, ShardCoordinatorCommand.Successor successor) {
    runner.apply(shard).ifPresent(protocol -> {
      successors.put(shard, successor.identity());
      protocol.handOverTo(successor.identity(), successor.membershipVersion());
    });
  }

  /** The shard's runner stopped, or a new one starts: nothing is named for it any more. */
  void forget(int shard) {
    successors.remove(shard);
  }

  /**
   * The shard's runner stopped (still its current runner): nothing is named for it any more, and every term its
   * protocol held is remembered as led, including a hand-over it took in only to decline it, or took in while its
   * close was on the way, whose LEADING its runner never published.
   */
  void stopped(int shard) {
    runner.apply(shard).ifPresent(protocol -> led(shard, protocol.highestLed()));
    forget(shard);
  }

  /** A runner of this process led {@code shard} under {@code token}. */
  void led(int shard, long token) {
    led.merge(shard, token, Math::max);
  }

  /** The highest token under which a runner of this process led {@code shard}; -1: none. */
  long ledBefore(int shard) {
    return led.getOrDefault(shard, -1L);
  }

  /**
   * A closing runner's hand-over is written only once its work stopped, which may take long: until then each view
   * names, as its proof, the successor's membership version it shows now, whose write was sent recently enough for the
   * successor to take the term in (an old one's send time may lie a renew deadline back by the time the hand-over is
   * written, and the successor then waits it out as another process's term); and a successor the view no longer shows
   * live (it is leaving too, or gone), or whose plan would not keep the shard ({@link #keptBy}), is named no more: the
   * runner releases the Lease, so that the member whose plan takes it takes it at once, instead of handing it to a
   * member that will never take it in. {@code member}: whether this replica is a member (counted live) now.
   */
  void follow(ShardCoordinatorInput.ViewObserved observed, boolean member) {
    for (Iterator<Map.Entry<Integer, String>> it = successors.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<Integer, String> named = it.next();
      Optional<LeaseProtocol> protocol = runner.apply(named.getKey());
      String version = observed.memberVersions().get(named.getValue());
      if (protocol.isEmpty()) {
        it.remove();
      } else if (observed.liveMembers().contains(named.getValue()) && version != null
          && keptBy(named.getValue(), named.getKey(), observed, member)) {
        protocol.get().handOverTo(named.getValue(), version);
      } else {
        protocol.get().handOverTo(null, null); // named again if a later view, before the release, says so
      }
    }
  }

  /**
   * Whether {@code successor}'s plan, from {@code observed} with {@code shard} handed to it, keeps the shard: a member
   * handed more than its share (old owners each fill the same lacking member, none seeing the others' hand-overs) finds
   * the extra shards surplus and declines them.
   */
  private boolean keptBy(String successor, int shard, ShardCoordinatorInput.ViewObserved observed, boolean member) {
    Map<Integer, String> owners = new TreeMap<>(observed.holders());
    owners.put(shard, successor);
    // Planned as the coordinator plans: this replica counted live exactly while it is a member (not once leaving).
    Set<String> live = new TreeSet<>(observed.liveMembers());
    if (member) {
      live.add(identity);
    } else {
      live.remove(identity);
    }
    return ShardPlanner.FAIR.plan(shardCount, live, successor, owners).keep().contains(shard);
  }
}
