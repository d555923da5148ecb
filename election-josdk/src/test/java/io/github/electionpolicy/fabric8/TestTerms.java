package io.github.electionpolicy.fabric8;

import java.time.Instant;

/** Terms for the sharded operator's tests that call its {@code start(shard, term)} themselves, without a runner. */
public final class TestTerms {

  private TestTerms() {}

  /** A term that stays valid until its runner would end it: an unelected one, on the system's clock. */
  public static LeadershipTerm valid(String identity) {
    return LeadershipTerm.unelected(identity, Instant.now(), Ticker.system());
  }
}
