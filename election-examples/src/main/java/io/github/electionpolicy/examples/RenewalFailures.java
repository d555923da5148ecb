package io.github.electionpolicy.examples;

import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionState;
import java.io.PrintStream;
import java.time.Duration;

/**
 * Prints the first failed renewal of each term of one replica: the adapter retries every retry period until
 * the renew deadline, and one line is enough to tell the story.
 *
 * <p>The adapter calls a listener one event at a time, so the flag needs no lock.
 */
final class RenewalFailures implements ElectionListener {

  private final String replica;
  private final PrintStream out;
  private boolean reportedThisTerm;

  RenewalFailures(String replica, PrintStream out) {
    this.replica = replica;
    this.out = out;
  }

  @Override
  public void stateChanged(ElectionState previous, ElectionState current) {
    if (current.kind() == ElectionState.Kind.LEADING) {
      reportedThisTerm = false;
    }
  }

  @Override
  public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
    if (!reportedThisTerm) {
      reportedThisTerm = true;
      out.println(Demo.line(replica, "renewal failed (" + cause.getMessage() + "); retrying until the renew "
          + "deadline"));
    }
  }
}
