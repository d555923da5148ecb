package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.common.testing.EqualsTester;
import com.google.common.testing.NullPointerTester;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Every public value type and builder of the adapter rejects {@code null} wherever it takes an object
 * (guava-testlib's {@link NullPointerTester} calls each public method and constructor with one {@code null}
 * argument at a time), and the values compare by value ({@link EqualsTester}).
 */
class ValueContractTest {

  private static final Exiter EXITER = status -> { };
  private static final LossHandler HANDLER = lostTerm -> LossHandler.AfterLoss.STOP;
  private static final LeadershipTerm TERM = LeadershipTerm.elected("a", 3, Instant.EPOCH, "42", () -> 0, 2_000);

  private static LeaseSettings.Builder settings() {
    return LeaseSettings.builder().leaseName("orders-controller");
  }

  private static NullPointerTester tester() {
    return new NullPointerTester()
        .setDefault(LeaseSettings.class, settings().build())
        .setDefault(LossPolicy.class, LossPolicy.recontend())
        .setDefault(Exiter.class, EXITER)
        .setDefault(LossHandler.class, HANDLER)
        .setDefault(LeadershipTerm.class, TERM)
        .setDefault(ElectionState.class, new ElectionState.Stopped(ElectionState.StopCause.CLOSED))
        .setDefault(ElectionDecision.class, MockApi.RUN_UNELECTED)
        .setDefault(Substrate.class, Substrate.usingKubernetesApi("kubernetes"))
        .setDefault(ElectionPolicy.class, ElectionPolicy.defaults())
        .setDefault(Environment.class, Environment.of(Map.of()))
        .setDefault(LeaderService.class, LeaderService.of(term -> { }, () -> { }));
  }

  @Test
  void leaseSettingsAndTheirBuilderRejectNullNamingTheSetting() {
    tester().testAllPublicStaticMethods(LeaseSettings.class);
    tester().testAllPublicInstanceMethods(settings().build());
    tester().testAllPublicInstanceMethods(settings());
  }

  @Test
  void leaseSettingsCompareByValue() {
    new EqualsTester()
        .addEqualityGroup(settings().build(), settings().build(), settings().build().toBuilder().build(),
            settings().leaseDuration(LeaseSettings.DEFAULT_LEASE_DURATION).lossPolicy(LossPolicy.exit()).build())
        .addEqualityGroup(settings().leaseName("other").build())
        .addEqualityGroup(settings().namespace("shop").build(), settings().namespace("shop").build())
        .addEqualityGroup(settings().identity("a").build(), settings().identity(Optional.of("a")).build())
        .addEqualityGroup(settings().environment(Environment.of(Map.of("POD_NAME", "p"))).build(),
            settings().environment(Environment.of(Map.of("POD_NAME", "p"))).build())
        .addEqualityGroup(settings().leaseDuration(Duration.ofSeconds(16)).build())
        .addEqualityGroup(settings().renewDeadline(Duration.ofSeconds(9)).build())
        .addEqualityGroup(settings().retryPeriod(Duration.ofSeconds(1)).build())
        .addEqualityGroup(settings().requestTimeout(Duration.ofSeconds(1)).build())
        .addEqualityGroup(settings().healthBudget(Duration.ofSeconds(30)).build())
        .addEqualityGroup(settings().stopTimeout(Duration.ofSeconds(1)).build())
        .addEqualityGroup(settings().lossPolicy(LossPolicy.recontend()).build())
        .addEqualityGroup(settings().serviceAccountNamespaceFile(Path.of("namespace")).build())
        .testEquals();
  }

  @Test
  void lossPoliciesRejectNull() {
    tester().testAllPublicStaticMethods(LossPolicy.class);
    tester().testAllPublicConstructors(LossPolicy.Exit.class);
    tester().testAllPublicConstructors(LossPolicy.Recontend.class);
    tester().testAllPublicConstructors(LossPolicy.Custom.class);
  }

  @Test
  void lossPoliciesCompareByValue() {
    new EqualsTester()
        .addEqualityGroup(LossPolicy.exit(), LossPolicy.exit(), new LossPolicy.Exit(Exiter.system()))
        .addEqualityGroup(LossPolicy.exit(EXITER), new LossPolicy.Exit(EXITER))
        .addEqualityGroup(LossPolicy.recontend(), new LossPolicy.Recontend())
        .addEqualityGroup(LossPolicy.custom(HANDLER), new LossPolicy.Custom(HANDLER))
        .testEquals();
    assertThat(List.of(LossPolicy.exit(), LossPolicy.recontend(), LossPolicy.custom(HANDLER)))
        .extracting(LossPolicy::kind)
        .containsExactly(LossPolicy.Kind.EXIT, LossPolicy.Kind.RECONTEND, LossPolicy.Kind.CUSTOM);
  }

  @Test
  void electionStatesAndHealthRejectNull() {
    tester().testAllPublicConstructors(ElectionState.NotContending.class);
    tester().testAllPublicConstructors(ElectionState.Following.class);
    tester().testAllPublicConstructors(ElectionState.Leading.class);
    tester().testAllPublicConstructors(ElectionHealth.class);
  }

  @Test
  void electionStatesAndHealthCompareByValue() {
    ElectionState following = new ElectionState.Following(Optional.of("a"));
    new EqualsTester()
        .addEqualityGroup(new ElectionState.NotContending("a"), new ElectionState.NotContending("a"))
        .addEqualityGroup(new ElectionState.NotContending("b"))
        .addEqualityGroup(following, new ElectionState.Following(Optional.of("a")))
        .addEqualityGroup(new ElectionState.Following(Optional.empty()))
        .addEqualityGroup(new ElectionState.Leading(TERM), new ElectionState.Leading(TERM))
        .addEqualityGroup(new ElectionState.Stopped(ElectionState.StopCause.CLOSED),
            new ElectionState.Stopped(ElectionState.StopCause.CLOSED, Optional.empty()))
        .addEqualityGroup(new ElectionState.Stopped(ElectionState.StopCause.LOST))
        .testEquals();
    new EqualsTester()
        .addEqualityGroup(new ElectionHealth(true, true, following, Optional.of(Duration.ofSeconds(1))),
            new ElectionHealth(true, true, following, Optional.of(Duration.ofSeconds(1))))
        .addEqualityGroup(new ElectionHealth(false, true, following, Optional.of(Duration.ofSeconds(1))))
        .addEqualityGroup(new ElectionHealth(true, false, following, Optional.of(Duration.ofSeconds(1))))
        .addEqualityGroup(new ElectionHealth(true, true, new ElectionState.Stopped(ElectionState.StopCause.CLOSED), Optional.of(Duration.ofSeconds(1))))
        .addEqualityGroup(new ElectionHealth(true, true, following, Optional.empty()))
        .testEquals();
  }

  @Test
  void leadershipTermRejectsNull() {
    tester().testAllPublicInstanceMethods(TERM);
  }

  @Test
  void leaseAccessAndItsExceptionRejectNull() {
    tester().testAllPublicStaticMethods(LeaseAccess.class);
    tester().testAllPublicConstructors(LeaseAccess.class);
    tester().testAllPublicConstructors(LeaseAccessDeniedException.class);
    tester().testAllPublicConstructors(TermEndedException.class);
  }

  @Test
  void leaseAccessComparesByValue() {
    new EqualsTester()
        .addEqualityGroup(new LeaseAccess(LeaseAccess.Verdict.GRANTED, List.of(), false, Optional.empty()),
            new LeaseAccess(LeaseAccess.Verdict.GRANTED, List.of(), false, Optional.empty()))
        .addEqualityGroup(new LeaseAccess(LeaseAccess.Verdict.GRANTED, List.of(), true, Optional.empty()))
        .addEqualityGroup(new LeaseAccess(LeaseAccess.Verdict.DENIED, List.of("get"), false, Optional.empty()))
        .addEqualityGroup(new LeaseAccess(LeaseAccess.Verdict.UNKNOWN, List.of(), false, Optional.of("why")))
        .testEquals();
  }

  @Test
  void leaseNamespaceRejectsNullButForAClientWithoutNamespace() throws Exception {
    // A client without a namespace answers getNamespace() with null; resolve(settings, null) is how it is asked.
    tester().ignore(LeaseNamespace.class.getMethod("resolve", LeaseSettings.class, String.class))
        .testAllPublicStaticMethods(LeaseNamespace.class);
    tester().testAllPublicConstructors(LeaseNamespace.class);
    org.assertj.core.api.Assertions.assertThatNullPointerException()
        .isThrownBy(() -> LeaseNamespace.resolve(null, "shop")).withMessage("settings");
    new EqualsTester()
        .addEqualityGroup(new LeaseNamespace("shop", LeaseNamespace.Source.EXPLICIT),
            LeaseNamespace.resolve(settings().namespace("shop").build(), null))
        .addEqualityGroup(new LeaseNamespace("shop", LeaseNamespace.Source.CLIENT_CONFIGURATION))
        .testEquals();
  }

  @Test
  void seamsAndTheRunnerBuilderRejectNull() throws Exception {
    tester().testAllPublicStaticMethods(LeaderService.class);
    tester().testAllPublicStaticMethods(Exiter.class);
    tester().testAllPublicStaticMethods(WriteGate.class);
    tester().testAllPublicStaticMethods(ElectionRunner.class);
    tester().testAllPublicInstanceMethods(ElectionRunner.builder());
    try (ElectionRunner runner = ElectionRunner.builder().decision(MockApi.RUN_UNELECTED)
        .service(LeaderService.of(term -> { }, () -> { })).start()) {
      tester().testAllPublicInstanceMethods(runner);
    }
  }
}
