package io.github.electionpolicy.springboot;

import io.github.electionpolicy.InvalidElectionSettingException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The tests' application context runners and what they share. */
final class Contexts {

  /**
   * Fast timings, as in the library's own tests: lease 2 s, renew deadline 1.5 s, retry 200 ms, and a stop
   * timeout that leaves a slow test machine room.
   */
  static final String[] FAST_TIMINGS = {
      "election.lease-duration=2s", "election.renew-deadline=1500ms", "election.retry-period=200ms"};

  /** The kill switch off: the runner runs its services at once and needs no API server. */
  static final String UNELECTED = "LEADER_ELECTION_ENABLED=false";

  private Contexts() {}

  /**
   * A runner with the election auto-configuration only. The health auto-configuration is Spring Boot 4's and
   * is added by the tests of it, so that these tests run on Spring Boot 3.5 too.
   */
  static ApplicationContextRunner election() {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(ElectionAutoConfiguration.class));
  }

  /** The library's exception somewhere in a start-up failure's causes; fails if there is none. */
  static InvalidElectionSettingException settingFailure(Throwable startupFailure) {
    for (Throwable cause = startupFailure; cause != null; cause = cause.getCause()) {
      if (cause instanceof InvalidElectionSettingException) {
        return (InvalidElectionSettingException) cause;
      }
    }
    throw new AssertionError("no InvalidElectionSettingException among the causes of " + startupFailure,
        startupFailure);
  }
}
