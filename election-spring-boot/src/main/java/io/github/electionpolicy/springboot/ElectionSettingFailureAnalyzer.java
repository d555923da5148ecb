package io.github.electionpolicy.springboot;

import io.github.electionpolicy.InvalidElectionSettingException;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns a start-up that failed on an {@link InvalidElectionSettingException} into Spring Boot's failure report:
 * the description is the library's own message (setting, value, what is accepted, the fix), with a fix that
 * calls a {@code LeaseSettings.builder()} method told as the property that sets it, and the action names what
 * to change in a Spring application: the {@code election.*} property the setting came from, or, for the kill
 * switch's value, the environment variable. Registered in {@code META-INF/spring.factories}.
 * Stateless; thread-safe.
 */
final class ElectionSettingFailureAnalyzer extends AbstractFailureAnalyzer<InvalidElectionSettingException> {

  /** The library's setting names whose property is not simply the name in kebab case. */
  private static final Map<String, String> PROPERTIES = Map.of(
      "substrate name", ElectionProperties.PREFIX + ".substrate.name");

  /** The library's setting names that are an {@code election.*} property in kebab case; any other is a variable. */
  private static final Set<String> SETTINGS = Set.of("leaseName", "namespace", "identity", "leaseDuration",
      "renewDeadline", "retryPeriod", "requestTimeout", "healthBudget", "stopTimeout", "killSwitchVariable");

  /** A builder call in the library's fix, e.g. {@code call LeaseSettings.builder().namespace(...)}. */
  private static final Pattern BUILDER_CALL =
      Pattern.compile("(call )?LeaseSettings\\.builder\\(\\)\\.([a-z][A-Za-z]*)\\(\\.\\.\\.\\)");

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, InvalidElectionSettingException cause) {
    return new FailureAnalysis(description(cause.getMessage()), action(cause.setting()), cause);
  }

  /** The library's message, its builder calls told as the properties a Spring application sets instead. */
  static String description(String message) {
    Matcher call = BUILDER_CALL.matcher(message);
    StringBuilder told = new StringBuilder();
    while (call.find()) {
      String property = property(call.group(2));
      call.appendReplacement(told, Matcher.quoteReplacement(property == null ? call.group()
          : (call.group(1) == null ? "" : "set ") + "the property " + property));
    }
    call.appendTail(told);
    return told.toString();
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
    if (!SETTINGS.contains(setting)) {
      // An environment variable's name (LEADER_ELECTION_ENABLED or the configured one): its value failed. Not told
      // by its case: the configured variable may be any name of letters, digits and underscores (leaderElection).
      return null;
    }
    return ElectionProperties.PREFIX + "." + setting.replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
  }

  /** Spring Boot's name for a property in the environment: upper case, dots to underscores, no dashes. */
  private static String environmentVariable(String property) {
    return property.replace("-", "").replace('.', '_').toUpperCase(Locale.ROOT);
  }
}
