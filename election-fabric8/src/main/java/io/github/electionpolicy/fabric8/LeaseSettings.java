package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * How to contend for the leader Lease: which Lease, as whom, with which timings, and what to do when
 * leadership is lost. An immutable value; every check runs in {@link Builder#build()}, which fails with an
 * {@link InvalidElectionSettingException} naming the setting, its value, what would be accepted and how to
 * fix it.
 *
 * <p>Timings follow client-go: the leader renews every {@link #retryPeriod()}, gives up when it has not
 * renewed within {@link #renewDeadline()}, and a follower takes the Lease over once it has seen no change
 * for {@link #leaseDuration()}. They must satisfy {@code leaseDuration > renewDeadline > 1.2 × retryPeriod},
 * so that a leader stops before anyone else may start.
 *
 * <pre>{@code
 * LeaseSettings settings = LeaseSettings.builder()
 *     .leaseName("orders-controller")          // required
 *     .leaseDuration(Duration.ofSeconds(15))   // the defaults, shown for clarity
 *     .renewDeadline(Duration.ofSeconds(10))
 *     .retryPeriod(Duration.ofSeconds(2))
 *     .lossPolicy(LossPolicy.exit())
 *     .build();
 * }</pre>
 *
 * <p>Instances are immutable and thread-safe. The {@link Builder} is not thread-safe.
 *
 * @see ElectedReconcilers
 */
public final class LeaseSettings {

  /** The default {@link #leaseDuration()}: 15 seconds, as in client-go. */
  public static final Duration DEFAULT_LEASE_DURATION = Duration.ofSeconds(15);
  /** The default {@link #renewDeadline()}: 10 seconds, as in client-go. */
  public static final Duration DEFAULT_RENEW_DEADLINE = Duration.ofSeconds(10);
  /** The default {@link #retryPeriod()}: 2 seconds, as in client-go. */
  public static final Duration DEFAULT_RETRY_PERIOD = Duration.ofSeconds(2);
  /** The shortest accepted {@link #requestTimeout()}: shorter requests fail on a healthy but busy server. */
  public static final Duration MINIMUM_REQUEST_TIMEOUT = Duration.ofMillis(200);
  /** The file in which Kubernetes mounts the pod's namespace. */
  public static final Path SERVICE_ACCOUNT_NAMESPACE_FILE =
      Path.of("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  /** The variable read first for the default identity; set it with the downward API. */
  public static final String POD_NAME_VARIABLE = "POD_NAME";
  /** The variable read for the default identity when {@value #POD_NAME_VARIABLE} is unset. */
  public static final String HOSTNAME_VARIABLE = "HOSTNAME";

  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final char[] SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789".toCharArray();
  private static final int SUFFIX_LENGTH = 5;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final String leaseName;
  private final Optional<String> namespace;
  private final String identity;
  private final Duration leaseDuration;
  private final Duration renewDeadline;
  private final Duration retryPeriod;
  private final Duration requestTimeout;
  private final Duration healthBudget;
  private final Duration stopTimeout;
  private final LossPolicy lossPolicy;
  private final Path serviceAccountNamespaceFile;

  private LeaseSettings(Builder b, String identity, Duration requestTimeout, Duration healthBudget,
      Duration stopTimeout) {
    this.leaseName = b.leaseName;
    this.namespace = Optional.ofNullable(b.namespace);
    this.identity = identity;
    this.leaseDuration = b.leaseDuration;
    this.renewDeadline = b.renewDeadline;
    this.retryPeriod = b.retryPeriod;
    this.requestTimeout = requestTimeout;
    this.healthBudget = healthBudget;
    this.stopTimeout = stopTimeout;
    this.lossPolicy = b.lossPolicy;
    this.serviceAccountNamespaceFile = b.serviceAccountNamespaceFile;
  }

  /**
   * Starts a builder with the defaults: 15 s / 10 s / 2 s timings, {@link LossPolicy#exit()}, identity from
   * {@value #POD_NAME_VARIABLE} or {@value #HOSTNAME_VARIABLE} in {@link Environment#system()}.
   *
   * @return a new builder; only {@link Builder#leaseName(String)} is required
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * The name of the {@code coordination.k8s.io/v1} Lease to contend for.
   *
   * @return a valid DNS-1123 subdomain
   */
  public String leaseName() {
    return leaseName;
  }

  /**
   * The namespace set explicitly with {@link Builder#namespace(String)}. When empty, the runner uses the
   * {@link #serviceAccountNamespaceFile()}, else the client's namespace.
   *
   * @return the explicit namespace, if any
   */
  public Optional<String> namespace() {
    return namespace;
  }

  /**
   * The identity this process writes as the Lease holder, unique among the replicas.
   *
   * @return the explicit identity, or the pod name (else host name) plus a short random suffix
   */
  public String identity() {
    return identity;
  }

  /**
   * How long followers wait, after they last saw the Lease change, before taking it over.
   *
   * @return whole seconds, at least one
   */
  public Duration leaseDuration() {
    return leaseDuration;
  }

  /**
   * How long the leader keeps leading without a successful renewal, measured on a monotonic clock from
   * the moment it sent its last successful renewal.
   *
   * @return shorter than the lease duration
   */
  public Duration renewDeadline() {
    return renewDeadline;
  }

  /**
   * How often the leader renews and followers re-read the Lease.
   *
   * @return less than renew deadline / 1.2
   */
  public Duration retryPeriod() {
    return retryPeriod;
  }

  /**
   * The timeout of each single Lease request, whatever the timeouts of the client passed in.
   *
   * @return between {@link #MINIMUM_REQUEST_TIMEOUT} and half the renew deadline (the default)
   */
  public Duration requestTimeout() {
    return requestTimeout;
  }

  /**
   * How long a contending process may go without a successful Lease call before it reports itself not
   * live.
   *
   * @return at least the renew deadline; by default lease duration + renew deadline
   */
  public Duration healthBudget() {
    return healthBudget;
  }

  /**
   * How long {@link ElectedReconcilers#close()} and a loss with {@link LossPolicy#exit()} wait for the
   * reconcilers to stop. On close, a Lease whose reconcilers did not stop in time is not released but left
   * to expire, so no other replica starts while they may still run.
   *
   * @return positive; by default the renew deadline
   */
  public Duration stopTimeout() {
    return stopTimeout;
  }

  /**
   * What happens after leadership was lost and the reconcilers stopped.
   *
   * @return {@link LossPolicy#exit()} unless set
   */
  public LossPolicy lossPolicy() {
    return lossPolicy;
  }

  /**
   * The file read for the namespace when none is set explicitly.
   *
   * @return {@link #SERVICE_ACCOUNT_NAMESPACE_FILE} unless set
   */
  public Path serviceAccountNamespaceFile() {
    return serviceAccountNamespaceFile;
  }

  @Override
  public boolean equals(Object other) {
    if (!(other instanceof LeaseSettings)) {
      return false;
    }
    LeaseSettings o = (LeaseSettings) other;
    return leaseName.equals(o.leaseName) && namespace.equals(o.namespace) && identity.equals(o.identity)
        && leaseDuration.equals(o.leaseDuration) && renewDeadline.equals(o.renewDeadline)
        && retryPeriod.equals(o.retryPeriod) && requestTimeout.equals(o.requestTimeout)
        && healthBudget.equals(o.healthBudget) && stopTimeout.equals(o.stopTimeout)
        && lossPolicy.equals(o.lossPolicy)
        && serviceAccountNamespaceFile.equals(o.serviceAccountNamespaceFile);
  }

  @Override
  public int hashCode() {
    return Objects.hash(leaseName, namespace, identity, leaseDuration, renewDeadline, retryPeriod,
        requestTimeout, healthBudget, stopTimeout, lossPolicy, serviceAccountNamespaceFile);
  }

  @Override
  public String toString() {
    return "LeaseSettings{leaseName=" + leaseName + ", namespace=" + namespace.orElse("<resolved at start>")
        + ", identity=" + identity + ", leaseDuration=" + Durations.format(leaseDuration)
        + ", renewDeadline=" + Durations.format(renewDeadline) + ", retryPeriod="
        + Durations.format(retryPeriod) + ", requestTimeout=" + Durations.format(requestTimeout)
        + ", healthBudget=" + Durations.format(healthBudget) + ", stopTimeout="
        + Durations.format(stopTimeout) + ", lossPolicy=" + lossPolicy + "}";
  }

  /**
   * Builds {@link LeaseSettings}; every check runs in {@link #build()}. Not thread-safe: use one builder
   * from one thread.
   *
   * <pre>{@code
   * LeaseSettings settings = LeaseSettings.builder()
   *     .leaseName("orders-controller")
   *     .namespace("shop")
   *     .lossPolicy(LossPolicy.recontend())
   *     .build();
   * }</pre>
   */
  public static final class Builder {
    private String leaseName;
    private String namespace;
    private String identity;
    private Environment environment = Environment.system();
    private Duration leaseDuration = DEFAULT_LEASE_DURATION;
    private Duration renewDeadline = DEFAULT_RENEW_DEADLINE;
    private Duration retryPeriod = DEFAULT_RETRY_PERIOD;
    private Duration requestTimeout;
    private Duration healthBudget;
    private Duration stopTimeout;
    private LossPolicy lossPolicy = LossPolicy.exit();
    private Path serviceAccountNamespaceFile = SERVICE_ACCOUNT_NAMESPACE_FILE;

    private Builder() {}

    /**
     * Sets the Lease name. Required.
     *
     * @param leaseName a DNS-1123 subdomain, e.g. {@code orders-controller}
     * @return this builder
     */
    public Builder leaseName(String leaseName) {
      this.leaseName = leaseName;
      return this;
    }

    /**
     * Sets the namespace of the Lease explicitly.
     *
     * @param namespace a DNS-1123 label
     * @return this builder
     */
    public Builder namespace(String namespace) {
      this.namespace = namespace;
      return this;
    }

    /**
     * Sets the identity explicitly, used as given (no suffix is added). It must be unique among replicas.
     *
     * @param identity a non-blank identity
     * @return this builder
     */
    public Builder identity(String identity) {
      this.identity = identity;
      return this;
    }

    /**
     * Sets the environment from which the default identity is read ({@value #POD_NAME_VARIABLE}, else
     * {@value #HOSTNAME_VARIABLE}).
     *
     * @param environment the environment, {@link Environment#system()} by default
     * @return this builder
     */
    public Builder environment(Environment environment) {
      this.environment = Objects.requireNonNull(environment, "environment");
      return this;
    }

    /**
     * Sets the lease duration.
     *
     * @param leaseDuration whole seconds, at least one, longer than the renew deadline
     * @return this builder
     */
    public Builder leaseDuration(Duration leaseDuration) {
      this.leaseDuration = leaseDuration;
      return this;
    }

    /**
     * Sets the renew deadline.
     *
     * @param renewDeadline shorter than the lease duration, longer than 1.2 × the retry period
     * @return this builder
     */
    public Builder renewDeadline(Duration renewDeadline) {
      this.renewDeadline = renewDeadline;
      return this;
    }

    /**
     * Sets the retry period.
     *
     * @param retryPeriod positive, less than renew deadline / 1.2
     * @return this builder
     */
    public Builder retryPeriod(Duration retryPeriod) {
      this.retryPeriod = retryPeriod;
      return this;
    }

    /**
     * Sets the timeout of each Lease request.
     *
     * @param requestTimeout between {@link #MINIMUM_REQUEST_TIMEOUT} and half the renew deadline
     * @return this builder
     */
    public Builder requestTimeout(Duration requestTimeout) {
      this.requestTimeout = requestTimeout;
      return this;
    }

    /**
     * Sets the liveness budget.
     *
     * @param healthBudget at least the renew deadline
     * @return this builder
     */
    public Builder healthBudget(Duration healthBudget) {
      this.healthBudget = healthBudget;
      return this;
    }

    /**
     * Sets how long to wait for reconcilers to stop on close and before exiting.
     *
     * @param stopTimeout positive
     * @return this builder
     */
    public Builder stopTimeout(Duration stopTimeout) {
      this.stopTimeout = stopTimeout;
      return this;
    }

    /**
     * Sets what happens after leadership was lost.
     *
     * @param lossPolicy {@link LossPolicy#exit()} (the default), {@link LossPolicy#recontend()} or
     *     {@link LossPolicy#custom(LossHandler)}
     * @return this builder
     */
    public Builder lossPolicy(LossPolicy lossPolicy) {
      this.lossPolicy = lossPolicy;
      return this;
    }

    /**
     * Sets the file read for the namespace when none is set explicitly; for tests and unusual mounts.
     *
     * @param file the file, {@link #SERVICE_ACCOUNT_NAMESPACE_FILE} by default
     * @return this builder
     */
    public Builder serviceAccountNamespaceFile(Path file) {
      this.serviceAccountNamespaceFile = file;
      return this;
    }

    /**
     * Checks every setting and builds the value.
     *
     * @return the settings
     * @throws InvalidElectionSettingException naming the first setting that is not valid
     */
    public LeaseSettings build() {
      checkLeaseName();
      checkNamespace();
      checkTimings();
      Duration timeout = checkRequestTimeout();
      Duration budget = checkHealthBudget();
      Duration stop = checkStopTimeout();
      if (lossPolicy == null) {
        throw new InvalidElectionSettingException("lossPolicy", null,
            "LossPolicy.exit(), LossPolicy.recontend() or LossPolicy.custom(handler)",
            "pass a loss policy or leave the default, LossPolicy.exit()");
      }
      if (serviceAccountNamespaceFile == null) {
        throw new InvalidElectionSettingException("serviceAccountNamespaceFile", null, "a file path",
            "leave the default " + SERVICE_ACCOUNT_NAMESPACE_FILE + " or pass the file your pods mount");
      }
      return new LeaseSettings(this, resolveIdentity(), timeout, budget, stop);
    }

    private void checkLeaseName() {
      if (leaseName == null || leaseName.length() > 253 || !DNS_SUBDOMAIN.matcher(leaseName).matches()) {
        throw new InvalidElectionSettingException("leaseName", leaseName,
            "a DNS-1123 subdomain of at most 253 characters: lower-case letters, digits, '-' and '.', "
                + "starting and ending with a letter or digit, e.g. \"orders-controller\"",
            "call leaseName(...) with the name the replicas of this controller share");
      }
    }

    private void checkNamespace() {
      if (namespace != null && (namespace.length() > 63 || !DNS_LABEL.matcher(namespace).matches())) {
        throw new InvalidElectionSettingException("namespace", namespace,
            "a DNS-1123 label of at most 63 characters: lower-case letters, digits and '-', e.g. \"shop\"",
            "pass the namespace the Lease lives in, or none to use the pod's own namespace");
      }
    }

    private void checkTimings() {
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

    private Duration checkRequestTimeout() {
      Duration half = renewDeadline.dividedBy(2);
      Duration timeout = requestTimeout == null ? half : requestTimeout;
      if (timeout.compareTo(MINIMUM_REQUEST_TIMEOUT) < 0 || timeout.compareTo(half) > 0) {
        String shown = requestTimeout == null
            ? Durations.format(timeout) + " (half of renewDeadline=" + Durations.format(renewDeadline) + ")"
            : Durations.format(timeout);
        throw new InvalidElectionSettingException("requestTimeout", shown,
            "a duration from " + Durations.format(MINIMUM_REQUEST_TIMEOUT)
                + " to half of renewDeadline=" + Durations.format(renewDeadline),
            requestTimeout == null
                ? "raise renewDeadline to at least " + Durations.format(MINIMUM_REQUEST_TIMEOUT.multipliedBy(2))
                : "pass a requestTimeout in that range, or none for half of renewDeadline");
      }
      return timeout;
    }

    private Duration checkHealthBudget() {
      Duration budget = healthBudget == null ? leaseDuration.plus(renewDeadline) : healthBudget;
      if (budget.compareTo(renewDeadline) < 0) {
        throw new InvalidElectionSettingException("healthBudget", Durations.format(budget),
            "a duration of at least renewDeadline=" + Durations.format(renewDeadline),
            "leave the default (leaseDuration + renewDeadline) or raise healthBudget");
      }
      return budget;
    }

    private Duration checkStopTimeout() {
      Duration stop = stopTimeout == null ? renewDeadline : stopTimeout;
      requirePositive("stopTimeout", stop, "e.g. 10s");
      return stop;
    }

    private static void requirePositive(String setting, Duration value, String example) {
      if (value == null || value.isNegative() || value.isZero()) {
        throw new InvalidElectionSettingException(setting, Durations.format(value),
            "a positive duration, " + example, "pass a positive java.time.Duration or leave the default");
      }
    }

    private String resolveIdentity() {
      if (identity != null) {
        if (identity.isBlank()) {
          throw new InvalidElectionSettingException("identity", identity,
              "a non-blank name unique among the replicas, e.g. the pod name",
              "pass a non-blank identity, or none to use " + POD_NAME_VARIABLE + " or " + HOSTNAME_VARIABLE);
        }
        return identity;
      }
      Optional<String> base = environment.get(POD_NAME_VARIABLE).filter(v -> !v.isBlank())
          .or(() -> environment.get(HOSTNAME_VARIABLE).filter(v -> !v.isBlank()));
      if (base.isEmpty()) {
        throw new InvalidElectionSettingException("identity", null,
            "an explicit identity, or " + POD_NAME_VARIABLE + " or " + HOSTNAME_VARIABLE
                + " set to a non-blank value",
            "set " + POD_NAME_VARIABLE + " from the downward API (fieldRef: metadata.name) "
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
}
