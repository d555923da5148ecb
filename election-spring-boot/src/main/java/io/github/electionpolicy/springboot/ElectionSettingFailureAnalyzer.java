package io.github.electionpolicy.springboot;

import io.github.electionpolicy.InvalidElectionSettingException;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a start-up that failed on an {@link InvalidElectionSettingException} into Spring Boot's failure report:
 * the description is the library's own message (setting, value, what is accepted, the fix), and the action
 * names what to change in a Spring application: the {@code election.*} property the setting came from, or,
 * for the kill switch's value, the environment variable. Registered in {@code META-INF/spring.factories}.
 * Stateless; thread-safe.
 */
final class ElectionSettingFailureAnalyzer extends AbstractFailureAnalyzer<InvalidElectionSettingException> {

  /** The library's setting names whose property is not simply the name in kebab case. */
  private static final Map<String, String> PROPERTIES = Map.of(
      "substrate name", ElectionProperties.PREFIX + ".substrate.name");

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, InvalidElectionSettingException cause) {
    return new FailureAnalysis(cause.getMessage(), action(cause.setting()), cause);
  }

  /** What to change, named as a Spring user sets it. */
  static String action(String setting) {
    String property = property(setting);
    if (property == null) {
      return "Change the environment variable " + setting + " (or the property of that name) to an accepted "
          + "value, or unset it; election." + "kill-switch-variable names the variable read.";
    }
    return "Change the property " + property + " (in application.properties or application.yml, or "
        + environmentVariable(property) + " in the environment) to an accepted value.";
  }

  /** The {@code election.*} property behind a setting; null for the kill switch's variable itself. */
  static String property(String setting) {
    if (setting.startsWith(ElectionProperties.PREFIX + ".")) {
      return setting;
    }
    if (PROPERTIES.containsKey(setting)) {
      return PROPERTIES.get(setting);
    }
    if (!setting.matches("[a-z][A-Za-z]*")) {
      // An environment variable's name (LEADER_ELECTION_ENABLED or the configured one): its value failed.
      return null;
    }
    return ElectionProperties.PREFIX + "." + setting.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
  }

  /** Spring Boot's name for a property in the environment: upper case, dots to underscores, no dashes. */
  private static String environmentVariable(String property) {
    return property.replace("-", "").replace('.', '_').toUpperCase(Locale.ROOT);
  }
}
