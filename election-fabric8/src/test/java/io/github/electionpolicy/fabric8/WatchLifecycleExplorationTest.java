package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Example;

/**
 * The follower's watch lifecycle of commit 030def8 (opened at the first wait while following, closed at the first
 * renewal or before the release), explored over generated simulation schedules (from the adversarial review,
 * h-attack4): a process never has two watches open at once, and a leader never renews twice in a row with a watch
 * still open (a take-over keeps the follower's watch; the renewal after it closes it).
 */
class WatchLifecycleExplorationTest {

  private static final int SCHEDULES = Integer.getInteger("watch.schedules", 300);

  @Example
  void noProcessHoldsTwoWatchesAndNoLeaderRenewsWithOne() {
    var generator = SimSchedules.schedules(1).generator(1000);
    Random random = new Random(20261201L);
    List<String> found = new ArrayList<>();
    for (int i = 0; i < SCHEDULES && found.size() < 5; i++) {
      SimSchedule schedule = generator.next(random).value();
      List<String> lines = Simulator.run(schedule, SimVariant.REAL).invariants().watchFindings();
      if (!lines.isEmpty()) {
        found.add(lines.get(0) + " under " + schedule);
      }
    }
    assertThat(found).isEmpty();
  }
}
