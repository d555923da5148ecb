package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The hand-written name checks of {@link SettingsChecks} accept exactly what the DNS-1123 regular expressions they
 * replaced match (the subdomain of a lease name, the label of a namespace), over seeded generated names and the
 * edge cases.
 */
class SettingsChecksTest {

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final String ALPHABET = "az09m5-.-.A_Z \u00e9";

  @Test
  void theHandWrittenChecksAcceptWhatTheRegularExpressionsMatch() {
    List<String> names = new ArrayList<>(List.of("", "a", "-", ".", "a.", ".a", "a..b", "a-", "-a", "a-b", "a.b",
        "a-.b", "a.-b", "0", "a.0", "orders-controller", "orders.controller-1", "A", "a_b", "ab.", "a b",
        "x".repeat(63), "x".repeat(64), "x".repeat(253), "x".repeat(254)));
    SplittableRandom random = new SplittableRandom(16);
    for (int i = 0; i < 20_000; i++) {
      StringBuilder name = new StringBuilder();
      int length = random.nextInt(9);
      for (int c = 0; c < length; c++) {
        name.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
      }
      names.add(name.toString());
    }
    int subdomains = 0;
    int labels = 0;
    for (String name : names) {
      boolean subdomain = DNS_SUBDOMAIN.matcher(name).matches();
      boolean label = DNS_LABEL.matcher(name).matches();
      assertThat(SettingsChecks.isSubdomain(name)).as("subdomain \"%s\"", name).isEqualTo(subdomain);
      assertThat(SettingsChecks.isLabel(name, 0, name.length())).as("label \"%s\"", name).isEqualTo(label);
      assertThat(SettingsChecks.isNamespace(name)).as("namespace \"%s\"", name)
          .isEqualTo(label && name.length() <= 63);
      subdomains += subdomain ? 1 : 0;
      labels += label ? 1 : 0;
    }
    // Both sides of each check were exercised.
    assertThat(subdomains).isGreaterThan(500).isLessThan(names.size() - 500);
    assertThat(labels).isGreaterThan(500).isLessThan(subdomains);
  }

  /**
   * Sound (h-attack16): every name of up to 5 characters over letters and digits the regular expressions must
   * refuse though Java calls them letters or digits ({@code Character.isDigit('\u0660')}, the Kelvin sign, which
   * lower-cases to 'k'), upper case, a line end (which {@code $} would let through), '-' and '.' is judged as the
   * expressions judge it.
   */
  @Test
  void everyShortNameOverTrickyCharactersIsJudgedAsTheRegularExpressionsJudgeIt() {
    String alphabet = "a0-.A\u0660\u212a\n";
    int checked = 0;
    for (int length = 0; length <= 5; length++) {
      int count = (int) Math.pow(alphabet.length(), length);
      for (int k = 0; k < count; k++) {
        StringBuilder name = new StringBuilder();
        for (int c = 0, v = k; c < length; c++, v /= alphabet.length()) {
          name.append(alphabet.charAt(v % alphabet.length()));
        }
        String n = name.toString();
        assertThat(SettingsChecks.isSubdomain(n)).as("subdomain \"%s\"", n)
            .isEqualTo(DNS_SUBDOMAIN.matcher(n).matches());
        assertThat(SettingsChecks.isLabel(n, 0, n.length())).as("label \"%s\"", n)
            .isEqualTo(DNS_LABEL.matcher(n).matches());
        checked++;
      }
    }
    assertThat(checked).isEqualTo(37_449);
  }
}
