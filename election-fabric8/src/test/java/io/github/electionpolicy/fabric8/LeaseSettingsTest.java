package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class LeaseSettingsTest {

  private static LeaseSettings.Builder valid() {
    return LeaseSettings.builder().leaseName("orders-controller")
        .environment(Environment.of(Map.of("POD_NAME", "orders-7f9c-x2k4")));
  }

  @Test
  void defaultStopTimeoutIsTheSafetyMarginBetweenRenewDeadlineAndLeaseDuration() {
    LeaseSettings settings = valid().leaseDuration(Duration.ofSeconds(30)).renewDeadline(Duration.ofSeconds(20))
        .build();

    assertThat(settings.stopTimeout()).isEqualTo(Duration.ofSeconds(10));
  }

  @Test
  void defaultsFollowClientGo() {
    LeaseSettings settings = valid().build();

    assertThat(settings.leaseDuration()).isEqualTo(Duration.ofSeconds(15));
    assertThat(settings.renewDeadline()).isEqualTo(Duration.ofSeconds(10));
    assertThat(settings.retryPeriod()).isEqualTo(Duration.ofSeconds(2));
    assertThat(settings.requestTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(settings.healthBudget()).isEqualTo(Duration.ofSeconds(25));
    assertThat(settings.stopTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(settings.lossPolicy()).isEqualTo(LossPolicy.exit());
    assertThat(settings.namespace()).isEmpty();
    assertThat(settings.serviceAccountNamespaceFile()).isEqualTo(LeaseSettings.SERVICE_ACCOUNT_NAMESPACE_FILE);
  }

  @Test
  void buildingTheSameSettingsTwiceGivesEqualValues() {
    assertThat(valid().build()).isEqualTo(valid().build()).hasSameHashCodeAs(valid().build());
  }

  @Test
  void identityIsEmptyUnlessSetBecauseTheRunnerResolvesItAtStart() {
    assertThat(valid().build().identity()).isEmpty();
  }

  @Test
  void explicitIdentityIsUsedAsGiven() {
    assertThat(valid().identity("replica-a").build().identity()).contains("replica-a");
  }

  @Test
  void toBuilderCopiesEveryValue() {
    LeaseSettings settings = valid().namespace("shop").identity("replica-a").leaseDuration(Duration.ofSeconds(30))
        .renewDeadline(Duration.ofSeconds(20)).retryPeriod(Duration.ofSeconds(5))
        .requestTimeout(Duration.ofSeconds(3)).healthBudget(Duration.ofMinutes(1)).stopTimeout(Duration.ofSeconds(7))
        .lossPolicy(LossPolicy.recontend()).serviceAccountNamespaceFile(Path.of("namespace")).build();

    assertThat(settings.toBuilder().build()).isEqualTo(settings);
    assertThat(settings.toBuilder().leaseName("other").build().leaseName()).isEqualTo("other");
  }

  @Test
  void toBuilderLetsDerivedDefaultsFollowNewTimingsAndKeepsWhatWasSet() {
    LeaseSettings defaults = valid().build();
    LeaseSettings slower = defaults.toBuilder().leaseDuration(Duration.ofSeconds(60))
        .renewDeadline(Duration.ofSeconds(40)).retryPeriod(Duration.ofSeconds(5)).build();
    LeaseSettings faster = defaults.toBuilder().leaseDuration(Duration.ofSeconds(4))
        .renewDeadline(Duration.ofSeconds(3)).retryPeriod(Duration.ofSeconds(1)).build();

    assertThat(slower).isEqualTo(valid().leaseDuration(Duration.ofSeconds(60))
        .renewDeadline(Duration.ofSeconds(40)).retryPeriod(Duration.ofSeconds(5)).build());
    assertThat(slower.healthBudget()).isEqualTo(Duration.ofSeconds(100));
    assertThat(faster.requestTimeout()).isEqualTo(Duration.ofMillis(1500));
    assertThat(faster.stopTimeout()).isEqualTo(Duration.ofSeconds(1));

    LeaseSettings set = valid().requestTimeout(Duration.ofSeconds(2)).build();
    assertThat(set.toBuilder().renewDeadline(Duration.ofSeconds(12)).build().requestTimeout())
        .as("a value set to something other than its default is kept").isEqualTo(Duration.ofSeconds(2));
  }

  @Test
  void aLeaseNameNeverSetFailsAtBuildTimeNamingTheSetting() {
    assertThatThrownBy(() -> LeaseSettings.builder().build())
        .isInstanceOfSatisfying(InvalidElectionSettingException.class,
            e -> assertThat(e.setting()).isEqualTo("leaseName"))
        .hasMessageStartingWith("leaseName=<missing> is not valid: accepted values are a DNS-1123 subdomain")
        .hasMessageContaining("fix: call leaseName(...)");
  }

  static Stream<Arguments> nullSettings() {
    return Stream.of(
        bad("leaseName", b -> b.leaseName(null)),
        bad("leaseDuration", b -> b.leaseDuration(null)),
        bad("namespace", b -> b.namespace((String) null)),
        bad("identity", b -> b.identity((String) null)),
        bad("environment", b -> b.environment(null)),
        bad("renewDeadline", b -> b.renewDeadline(null)),
        bad("retryPeriod", b -> b.retryPeriod(null)),
        bad("requestTimeout", b -> b.requestTimeout(null)),
        bad("healthBudget", b -> b.healthBudget(null)),
        bad("stopTimeout", b -> b.stopTimeout(null)),
        bad("lossPolicy", b -> b.lossPolicy(null)),
        bad("serviceAccountNamespaceFile", b -> b.serviceAccountNamespaceFile(null)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("nullSettings")
  void aNullSettingIsRejectedAtTheSetterNamingIt(String setting, UnaryOperator<LeaseSettings.Builder> change) {
    assertThatThrownBy(() -> change.apply(valid()))
        .isInstanceOf(NullPointerException.class)
        .hasMessage(setting);
  }

  @Test
  void fastTimingsThatKeepTheRuleAreAccepted() {
    LeaseSettings settings = valid().leaseDuration(Duration.ofSeconds(1)).renewDeadline(Duration.ofMillis(800))
        .retryPeriod(Duration.ofMillis(100)).build();

    assertThat(settings.requestTimeout()).isEqualTo(Duration.ofMillis(400));
    assertThat(settings.healthBudget()).isEqualTo(Duration.ofMillis(1800));
  }

  @Test
  void timingRuleMessageNamesBothSettingsAndTheirValues() {
    assertThatThrownBy(() -> valid().leaseDuration(Duration.ofSeconds(5)).renewDeadline(Duration.ofSeconds(5))
        .build())
        .isInstanceOf(InvalidElectionSettingException.class)
        .hasMessageStartingWith("renewDeadline=\"5s\" is not valid")
        .hasMessageContaining("leaseDuration=5s")
        .hasMessageContaining("fix:");
    assertThatThrownBy(() -> valid().renewDeadline(Duration.ofMillis(2400)).retryPeriod(Duration.ofSeconds(2))
        .build())
        .isInstanceOf(InvalidElectionSettingException.class)
        .hasMessageStartingWith("retryPeriod=\"2s\" is not valid")
        .hasMessageContaining("renewDeadline=2.4s")
        .hasMessageContaining("1.2 × retryPeriod");
  }

  static Stream<Arguments> badSettings() {
    return Stream.of(
        bad("leaseName", b -> b.leaseName("Orders_Controller")),
        bad("leaseName", b -> b.leaseName("-orders")),
        bad("leaseName", b -> b.leaseName("a".repeat(254))),
        bad("namespace", b -> b.namespace("Shop")),
        bad("namespace", b -> b.namespace("shop.eu")),
        bad("identity", b -> b.identity("  ")),
        bad("leaseDuration", b -> b.leaseDuration(Duration.ofMillis(1500))),
        bad("leaseDuration", b -> b.leaseDuration(Duration.ofMillis(500))),
        bad("leaseDuration", b -> b.leaseDuration(Duration.ZERO)),
        bad("renewDeadline", b -> b.renewDeadline(Duration.ofSeconds(-1))),
        bad("renewDeadline", b -> b.renewDeadline(Duration.ofSeconds(15))),
        bad("retryPeriod", b -> b.retryPeriod(Duration.ZERO)),
        bad("retryPeriod", b -> b.retryPeriod(Duration.ofMillis(8400))),
        bad("requestTimeout", b -> b.requestTimeout(Duration.ofMillis(100))),
        bad("requestTimeout", b -> b.requestTimeout(Duration.ofSeconds(6))),
        bad("requestTimeout", b -> b.leaseDuration(Duration.ofSeconds(1)).renewDeadline(Duration.ofMillis(300))
            .retryPeriod(Duration.ofMillis(100))),
        bad("healthBudget", b -> b.healthBudget(Duration.ofSeconds(9))),
        bad("stopTimeout", b -> b.stopTimeout(Duration.ZERO)));
  }

  private static Arguments bad(String setting, UnaryOperator<LeaseSettings.Builder> change) {
    return Arguments.of(setting, change);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("badSettings")
  void everyBadSettingFailsAtBuildTimeNamingTheSetting(String setting,
      UnaryOperator<LeaseSettings.Builder> change) {
    LeaseSettings.Builder builder = change.apply(valid());

    assertThatThrownBy(builder::build)
        .isInstanceOfSatisfying(InvalidElectionSettingException.class,
            e -> assertThat(e.setting()).isEqualTo(setting))
        .hasMessageStartingWith(setting + "=")
        .hasMessageContaining("is not valid: accepted values are")
        .hasMessageContaining("; fix: ");
  }

  // ---- finding 6 of the review of the start-up, settings and health changes --------------------------

  /**
   * Attack: the docs promise every setting fails in build() with an InvalidElectionSettingException naming it.
   * With Immutables the derived defaults (healthBudget = leaseDuration + renewDeadline, stopTimeout =
   * leaseDuration - renewDeadline) are computed in the generated constructor BEFORE @Value.Check runs the
   * checks, so a huge duration (Duration.ofSeconds(Long.MAX_VALUE), ChronoUnit.FOREVER.getDuration(): "never
   * expire" in a test) escapes as a bare {@code ArithmeticException: long overflow} that names no setting and
   * says nothing of how to fix it; the leaseDuration check (at most Integer.MAX_VALUE seconds) never runs.
   *
   * <p>Fix: compute the derived defaults with saturating arithmetic (or check the raw inputs in the defaults),
   * so the checks get to run and name leaseDuration / renewDeadline.
   */
  @Test
  void aHugeDurationFailsNamingTheSetting() {
    Throwable lease = catchThrowable(() -> LeaseSettings.builder().leaseName("orders")
        .leaseDuration(Duration.ofSeconds(Long.MAX_VALUE)).build());
    Throwable deadline = catchThrowable(() -> LeaseSettings.builder().leaseName("orders")
        .renewDeadline(Duration.ofSeconds(Long.MAX_VALUE)).build());

    assertThat(lease).isInstanceOf(InvalidElectionSettingException.class).hasMessageContaining("leaseDuration");
    assertThat(deadline).isInstanceOf(InvalidElectionSettingException.class).hasMessageContaining("renewDeadline");
  }

  // ---- finding 9 of the review of the start-up, settings and health changes --------------------------

  /**
   * Attack: toBuilder() copies the derived defaults (documented). Change the timings on a toBuilder() of the
   * defaults and build() fails on a setting the user never set, with a fix that cannot be applied: for
   * healthBudget "leave the default (leaseDuration + renewDeadline) or raise healthBudget" (they did leave it;
   * the 25 s came from the copy), for requestTimeout "pass ... none for half of renewDeadline" (a builder from
   * toBuilder() has no way to pass "none"). "Bad configuration fails loudly with a message that says what to
   * fix": here the message says the wrong thing.
   *
   * <p>Fix: let the derived defaults follow the timings on toBuilder() (copy only the attributes that were set
   * explicitly: Immutables can track that with a non-default @Value.Default bit, or keep the raw Optionals), or
   * at least say in the message that the value was copied by toBuilder() and must be set explicitly.
   */
  @Test
  void toBuilderWithNewTimingsBuildsOrNamesAFixThatCanBeApplied() {
    LeaseSettings defaults = LeaseSettings.builder().leaseName("orders").build();

    Throwable slower = catchThrowable(() -> defaults.toBuilder()
        .leaseDuration(Duration.ofSeconds(60)).renewDeadline(Duration.ofSeconds(40)).retryPeriod(Duration.ofSeconds(5))
        .build());
    Throwable faster = catchThrowable(() -> defaults.toBuilder()
        .leaseDuration(Duration.ofSeconds(4)).renewDeadline(Duration.ofSeconds(3)).retryPeriod(Duration.ofSeconds(1))
        .build());

    if (slower != null) {
      assertThat(slower).as("healthBudget was never set: 'leave the default' is what the user did")
          .hasMessageNotContaining("leave the default");
    }
    if (faster != null) {
      assertThat(faster).as("a toBuilder() builder cannot pass 'none'")
          .hasMessageNotContaining("or none for half of renewDeadline");
    }
  }
}
