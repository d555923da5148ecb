package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Test;

/** Rows of the lifecycle's table, read critically (the adversarial review of commit 0201dfc). */
class RunnerLifecycleAttackTest {

  /**
   * FINDING 6. Running unelected, a failure of the runner's logic ("failed": whatever a command threw on the
   * loop, an Error included) stops the services without ending the unelected term ("unelected | failed | log
   * ERROR; stop services #1", where a close says "end term unelected; stop services #1"), and nothing ends it
   * later: reportStopped ends only an elected term (through the elector). The services' stop() runs while their
   * term still says valid, and after STOPPED the term stays valid for ever (isValid() true, awaitEnd() never
   * returns), so work fenced by the term, or waiting for its end, goes on. And under the settings' loss policy
   * (EXIT, also the default without settings) the unelected runner then calls the exiter, though running
   * unelected uses only the identity and the stop timeout of the settings (ElectionRunner.Builder#settings).
   */
  @Test
  void unelectedAFailureEndsTheTermBeforeTheStopAndDoesNotExit() {
    RunnerLifecycle lifecycle = RunnerLifecycleTable.reach("unelected");
    List<String> commands = new ArrayList<>();
    lifecycle.step(new RunnerLifecycleInput.ElectionFailed(RunnerLifecycleTable.BUG)).stream()
        .map(RunnerLifecycleTable::render).forEach(commands::add);
    lifecycle.step(new RunnerLifecycleInput.ServicesStopped(true, false)).stream()
        .map(RunnerLifecycleTable::render).forEach(commands::add);

    assertThat(commands).as("commands after the failure, then the stop's return")
        .contains("end term unelected")
        .doesNotContain("exit");
    assertThat(commands.indexOf("end term unelected")).as("the term ends before the services stop")
        .isLessThan(commands.indexOf("stop services #1"));
    assertThat(lifecycle.phase()).isInstanceOf(RunnerLifecyclePhase.Stopped.class);
  }
}
