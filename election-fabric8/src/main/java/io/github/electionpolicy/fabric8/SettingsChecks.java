package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The checks behind {@link LeaseSettings.Builder#build()}; each failure names the setting, its value, what
 * would be accepted and how to fix it.
 */
final class SettingsChecks {

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  // No vowels and no look-alikes (0/o, 1/l): a suffix never spells a word or reads ambiguously.
  private static final char[] SUFFIX_ALPHABET = "bcdfghjkmnpqrstvwxz2456789".toCharArray();
  private static final int SUFFIX_LENGTH = 5;
  private static final SecureRandom RANDOM = new SecureRandom();

  private SettingsChecks() {}

  static void leaseName(String leaseName) {
    if (leaseName == null || leaseName.length() > 253 || !DNS_SUBDOMAIN.matcher(leaseName).matches()) {
      throw new InvalidElectionSettingException("leaseName", leaseName,
          "a DNS-1123 subdomain of at most 253 characters: lower-case letters, digits, '-' and '.', "
              + "starting and ending with a letter or digit, e.g. \"orders-controller\"",
          "call leaseName(...) with the name the replicas of this controller share");
    }
  }

  static void namespace(String namespace) {
    if (namespace != null && !isNamespace(namespace)) {
      throw new InvalidElectionSettingException("namespace", namespace,
          "a DNS-1123 label of at most 63 characters: lower-case letters, digits and '-', e.g. \"shop\"",
          "pass the namespace the Lease lives in, or none to use the pod's own namespace");
    }
  }

  /** Whether {@code namespace} is a DNS-1123 label, as Kubernetes requires of namespace names. */
  static boolean isNamespace(String namespace) {
    return namespace.length() <= 63 && DNS_LABEL.matcher(namespace).matches();
  }

  static void timings(Duration leaseDuration, Duration renewDeadline, Duration retryPeriod) {
    if (leaseDuration == null || leaseDuration.compareTo(Duration.ofSeconds(1)) < 0
        || leaseDuration.getNano() != 0 || leaseDuration.getSeconds() > Integer.MAX_VALUE) {
      throw new InvalidElectionSettingException("leaseDuration", Durations.format(leaseDuration),
          "whole seconds, at least 1s (the Lease stores leaseDurationSeconds), e.g. 15s",
          "round leaseDuration to whole seconds, e.g. Duration.ofSeconds(15)");
    }
    requirePositive("renewDeadline", renewDeadline, "e.g. 10s");
    requirePositive("retryPeriod", retryPeriod, "e.g. 2s");
    if (renewDeadline.compareTo(leaseDuration) >= 0) {
      throw new InvalidElectionSettingException("renewDeadline", Durations.format(renewDeadline),
          "a duration shorter than leaseDuration=" + Durations.format(leaseDuration)
              + ", so the leader stops before a follower may take over",
          "lower renewDeadline below leaseDuration=" + Durations.format(leaseDuration)
              + " or raise leaseDuration above renewDeadline=" + Durations.format(renewDeadline));
    }
    if (!Durations.longerThanTenthsOf(renewDeadline, retryPeriod, 12)) {
      throw new InvalidElectionSettingException("retryPeriod", Durations.format(retryPeriod),
          "a duration such that renewDeadline=" + Durations.format(renewDeadline)
              + " is longer than 1.2 × retryPeriod, so the leader can retry a failed renewal",
          "lower retryPeriod below renewDeadline / 1.2 = "
              + Durations.format(renewDeadline.multipliedBy(10).dividedBy(12))
              + " or raise renewDeadline");
    }
  }

  static Duration requestTimeout(Duration requestTimeout, Duration renewDeadline) {
    Duration half = renewDeadline.dividedBy(2);
    Duration timeout = requestTimeout == null ? half : requestTimeout;
    if (timeout.compareTo(LeaseSettings.MINIMUM_REQUEST_TIMEOUT) < 0 || timeout.compareTo(half) > 0) {
      String shown = requestTimeout == null
          ? Durations.format(timeout) + " (half of renewDeadline=" + Durations.format(renewDeadline) + ")"
          : Durations.format(timeout);
      throw new InvalidElectionSettingException("requestTimeout", shown,
          "a duration from " + Durations.format(LeaseSettings.MINIMUM_REQUEST_TIMEOUT)
              + " to half of renewDeadline=" + Durations.format(renewDeadline),
          requestTimeout == null
              ? "raise renewDeadline to at least "
                  + Durations.format(LeaseSettings.MINIMUM_REQUEST_TIMEOUT.multipliedBy(2))
              : "pass a requestTimeout in that range, or none for half of renewDeadline");
    }
    return timeout;
  }

  static Duration healthBudget(Duration healthBudget, Duration leaseDuration, Duration renewDeadline) {
    Duration budget = healthBudget == null ? leaseDuration.plus(renewDeadline) : healthBudget;
    if (budget.compareTo(renewDeadline) < 0) {
      throw new InvalidElectionSettingException("healthBudget", Durations.format(budget),
          "a duration of at least renewDeadline=" + Durations.format(renewDeadline),
          "leave the default (leaseDuration + renewDeadline) or raise healthBudget");
    }
    return budget;
  }

  static Duration stopTimeout(Duration stopTimeout, Duration leaseDuration, Duration renewDeadline) {
    Duration stop = stopTimeout == null ? safetyMargin(leaseDuration, renewDeadline) : stopTimeout;
    requirePositive("stopTimeout", stop, "e.g. 5s");
    return stop;
  }

  /**
   * {@code leaseDuration - renewDeadline}: the time a leader that lost at its deadline has to stop its
   * reconcilers before a follower may take over.
   */
  static Duration safetyMargin(Duration leaseDuration, Duration renewDeadline) {
    return leaseDuration.minus(renewDeadline);
  }

  private static void requirePositive(String setting, Duration value, String example) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new InvalidElectionSettingException(setting, Durations.format(value),
          "a positive duration, " + example, "pass a positive java.time.Duration or leave the default");
    }
  }

  static String identity(String identity, Environment environment) {
    if (identity != null) {
      if (identity.isBlank()) {
        throw new InvalidElectionSettingException("identity", identity,
            "a non-blank name unique among the replicas, e.g. the pod name",
            "pass a non-blank identity, or none to use " + LeaseSettings.POD_NAME_VARIABLE + " or "
                + LeaseSettings.HOSTNAME_VARIABLE);
      }
      return identity;
    }
    Optional<String> base = environment.get(LeaseSettings.POD_NAME_VARIABLE).filter(v -> !v.isBlank())
        .or(() -> environment.get(LeaseSettings.HOSTNAME_VARIABLE).filter(v -> !v.isBlank()));
    if (base.isEmpty()) {
      throw new InvalidElectionSettingException("identity", null,
          "an explicit identity, or " + LeaseSettings.POD_NAME_VARIABLE + " or "
              + LeaseSettings.HOSTNAME_VARIABLE
              + " set to a non-blank value",
          "set " + LeaseSettings.POD_NAME_VARIABLE + " from the downward API (fieldRef: metadata.name) "
              + "or call identity(...)");
    }
    return base.get().trim() + "-" + randomSuffix();
  }

  private static String randomSuffix() {
    char[] suffix = new char[SUFFIX_LENGTH];
    for (int i = 0; i < suffix.length; i++) {
      suffix[i] = SUFFIX_ALPHABET[RANDOM.nextInt(SUFFIX_ALPHABET.length)];
    }
    return new String(suffix);
  }
}
