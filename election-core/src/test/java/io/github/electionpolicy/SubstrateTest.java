package io.github.electionpolicy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

class SubstrateTest {

  @Test
  void keepsNameAndCapability() {
    Substrate substrate = Substrate.usingKubernetesApi("kubernetes");

    assertThat(substrate.name()).isEqualTo("kubernetes");
    assertThat(substrate.usesKubernetesApi()).isTrue();
    assertThat(substrate).isEqualTo(Substrate.of("kubernetes", true))
        .isNotEqualTo(Substrate.withoutKubernetesApi("kubernetes"));
  }

  @Test
  void theNamedFactoriesSayWhetherTheKubernetesApiIsUsed() {
    assertThat(Substrate.usingKubernetesApi("jobs").usesKubernetesApi()).isTrue();
    assertThat(Substrate.withoutKubernetesApi("direct").usesKubernetesApi()).isFalse();
    assertThatThrownBy(() -> Substrate.withoutKubernetesApi(" ")).isInstanceOf(InvalidElectionSettingException.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "\t\n"})
  void rejectsBlankNamesWithTheSettingAndAFix(String name) {
    assertThatThrownBy(() -> Substrate.of(name, true))
        .isInstanceOf(InvalidElectionSettingException.class)
        .hasMessageStartingWith("substrate name=" + Text.quote(name) + " is not valid")
        .hasMessageContaining("non-blank");
  }

  @Test
  void rejectsNullName() {
    assertThatThrownBy(() -> Substrate.of(null, false))
        .isInstanceOf(NullPointerException.class).hasMessageContaining("substrate name");
  }
}
