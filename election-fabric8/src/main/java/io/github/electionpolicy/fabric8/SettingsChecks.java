package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.InvalidElectionSettingException;
import java.time.Duration;

/**
 * The checks behind {@link LeaseSettings}'s {@code build()} (its {@code @Value.Check}); each failure names the
 * setting, its value, what would be accepted and how to fix it. Values are never {@code null} here: the
 * builder rejects {@code null} at the setter.
 */
final class SettingsChecks {

  // The names are checked by hand, not with regular expressions: a Pattern compiled when this class loads, and
  // matched for the first time, was a millisecond of a fresh JVM's first start() (issue 16). What they accept is
  // what "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*" (a subdomain) and
  // "[a-z0-9]([-a-z0-9]*[a-z0-9])?" (a label) match; SettingsChecksTest compares them over generated names.

  private SettingsChecks() {}

  static void leaseName(String leaseName) {
    if (leaseName.length() > 253 || !isSubdomain(leaseName)) {
      throw badLeaseName(leaseName);
    }
  }

  /** The lease name was never set: the same message as for a bad one, with the value shown as missing. */
  static InvalidElectionSettingException missingLeaseName(IllegalStateException cause) {
    InvalidElectionSettingException missing = badLeaseName(null);
    missing.initCause(cause);
    return missing;
  }

  private static InvalidElectionSettingException badLeaseName(String leaseName) {
    return new InvalidElectionSettingException("leaseName", leaseName,
        "a DNS-1123 subdomain of at most 253 characters: lower-case letters, digits, '-' and '.', "
            + "starting and ending with a letter or digit, e.g. \"orders-controller\"",
        "call leaseName(...) with the name the replicas of this controller share");
  }

  static void namespace(String namespace) {
    if (!isNamespace(namespace)) {
      throw new InvalidElectionSettingException("namespace", namespace,
          "a DNS-1123 label of at most 63 characters: lower-case letters, digits and '-', e.g. \"shop\"",
          "pass the namespace the Lease lives in, or none to use the pod's own namespace");
    }
  }

  /** Whether {@code namespace} is a DNS-1123 label, as Kubernetes requires of namespace names. */
  static boolean isNamespace(String namespace) {
    return namespace.length() <= 63 && isLabel(namespace, 0, namespace.length());
  }

  /** Labels joined by dots, each as {@link #isLabel}: a DNS-1123 subdomain, not counting its length. */
  static boolean isSubdomain(String name) {
    int from = 0;
    while (true) {
      int dot = name.indexOf('.', from);
      int to = dot < 0 ? name.length() : dot;
      if (!isLabel(name, from, to)) {
        return false;
      }
      if (dot < 0) {
        return true;
      }
      from = dot + 1;
    }
  }

  /**
   * Whether {@code name} from {@code from} to {@code to} is a DNS-1123 label, not counting its length: lower-case
   * letters, digits and '-', starting and ending with a letter or digit.
   */
  static boolean isLabel(String name, int from, int to) {
    if (from >= to || !isLowerAlphanumeric(name.charAt(from)) || !isLowerAlphanumeric(name.charAt(to - 1))) {
      return false;
    }
    for (int i = from + 1; i < to - 1; i++) {
      char c = name.charAt(i);
      if (c != '-' && !isLowerAlphanumeric(c)) {
        return false;
      }
    }
    return true;
  }

  private static boolean isLowerAlphanumeric(char c) {
    return c >= 'a' && c <= 'z' || c >= '0' && c <= '9';
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

  static void requestTimeout(Duration requestTimeout, Duration renewDeadline) {
    Duration half = renewDeadline.dividedBy(2);
    if (requestTimeout.compareTo(LeaseSettings.MINIMUM_REQUEST_TIMEOUT) < 0 || requestTimeout.compareTo(half) > 0) {
      // The value alone cannot tell a default from an explicit setting; one equal to the default is shown and
      // fixed as the default, which is what it is unless someone wrote out the default by hand.
      boolean theDefault = requestTimeout.equals(half);
      String shown = theDefault
          ? Durations.format(requestTimeout) + " (half of renewDeadline=" + Durations.format(renewDeadline) + ")"
          : Durations.format(requestTimeout);
      throw new InvalidElectionSettingException("requestTimeout", shown,
          "a duration from " + Durations.format(LeaseSettings.MINIMUM_REQUEST_TIMEOUT)
              + " to half of renewDeadline=" + Durations.format(renewDeadline),
          theDefault
              ? "raise renewDeadline to at least "
                  + Durations.format(LeaseSettings.MINIMUM_REQUEST_TIMEOUT.multipliedBy(2))
              : "pass a requestTimeout in that range, or none for half of renewDeadline");
    }
  }

  static void healthBudget(Duration healthBudget, Duration renewDeadline) {
    if (healthBudget.compareTo(renewDeadline) < 0) {
      throw new InvalidElectionSettingException("healthBudget", Durations.format(healthBudget),
          "a duration of at least renewDeadline=" + Durations.format(renewDeadline),
          "leave the default (leaseDuration + renewDeadline) or raise healthBudget");
    }
  }

  static void stopTimeout(Duration stopTimeout) {
    requirePositive("stopTimeout", stopTimeout, "e.g. 5s");
  }

  /**
   * {@code leaseDuration - renewDeadline}: the time a leader that lost at its deadline has to stop its
   * services before a follower may take over.
   */
  static Duration safetyMargin(Duration leaseDuration, Duration renewDeadline) {
    try {
      return leaseDuration.minus(renewDeadline);
    } catch (ArithmeticException overflow) {
      // Only for absurd inputs, which the checks of leaseDuration and renewDeadline then reject by name.
      return leaseDuration;
    }
  }

  /** {@code a + b}, or {@code a} where the sum overflows (absurd inputs, rejected by their own checks). */
  static Duration sumOrFirst(Duration a, Duration b) {
    try {
      return a.plus(b);
    } catch (ArithmeticException overflow) {
      return a;
    }
  }

  private static void requirePositive(String setting, Duration value, String example) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new InvalidElectionSettingException(setting, Durations.format(value),
          "a positive duration, " + example, "pass a positive java.time.Duration or leave the default");
    }
  }

  /** An explicit identity: used as given, so it must not be blank. */
  static void identity(String identity) {
    if (identity.isBlank()) {
      throw new InvalidElectionSettingException("identity", identity,
          "a non-blank name unique among the replicas, e.g. the pod name",
          "pass a non-blank identity, or none to use " + LeaseSettings.POD_NAME_VARIABLE + ", "
              + LeaseSettings.HOSTNAME_VARIABLE + " or the host name, with a random suffix");
    }
  }
}
