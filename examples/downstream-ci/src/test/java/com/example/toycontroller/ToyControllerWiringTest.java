package com.example.toycontroller;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.testkit.ElectionWiringContract;
import io.github.electionpolicy.testkit.ObservedStartup;

/**
 * Checks the toy controller's start-up wiring against every row of the election truth table. Implementing
 * the contract is the whole test: jqwik runs its properties against {@link #startUp}.
 */
class ToyControllerWiringTest implements ElectionWiringContract {

  /**
   * Set by run.sh ({@code -Dexample.miswired=true}) to show that the contract fails a start-up that passes a
   * hard-coded substrate flag, a classic wiring mistake.
   */
  private static final boolean MISWIRED = Boolean.getBoolean("example.miswired");

  @Override
  public ObservedStartup startUp(Environment environment, Substrate substrate) {
    RecordingElector elector = new RecordingElector();
    RecordingReconcilers reconcilers = new RecordingReconcilers();
    ToyController controller = new ToyController(ElectionPolicy.defaults(), elector, reconcilers);

    ElectionDecision decision = MISWIRED
        ? controller.start(environment, Substrate.of(substrate.name(), false))
        : controller.start(environment, substrate);

    return ObservedStartup.of(elector.contended, reconcilers.started).withLoggedSummary(decision.summary());
  }

  /** Records contention; never leads, so reconcilers started here were started without the Lease. */
  private static final class RecordingElector implements ToyController.LeaderElector {
    boolean contended;

    @Override
    public void contend(Runnable onStartedLeading) {
      contended = true;
    }
  }

  private static final class RecordingReconcilers implements ToyController.Reconcilers {
    boolean started;

    @Override
    public void start() {
      started = true;
    }
  }
}
