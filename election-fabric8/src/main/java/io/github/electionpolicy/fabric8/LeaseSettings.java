package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

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
 * @see ElectionRunner
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
   * How long {@link ElectionRunner#close()} and a loss with {@link LossPolicy#exit()} wait for the
   * reconcilers to stop. The default is the safety margin {@code leaseDuration - renewDeadline}: a leader
   * that lost at its renew deadline has that long before a follower may take over, so under
   * {@link LossPolicy#exit()} the process exits (ending whatever still runs) before anyone else can start.
   * A longer timeout is accepted (a graceful {@code close()} keeps renewing while it waits), but then a
   * reconciler that is slow to stop after a loss may still run when another replica starts; the runner
   * warns about it at start under {@link LossPolicy#exit()}. On close, a Lease whose reconcilers did not
   * stop in time is not released but left to expire: another replica then takes over after one lease
   * duration, whether or not they stopped. No timeout makes a reconciler that ignores {@code stop()} and
   * its {@link LeadershipTerm} safe; fence its writes with the term.
   *
   * @return positive; by default {@code leaseDuration - renewDeadline}
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
     * Sets how long to wait for reconcilers to stop on close and before exiting; see
     * {@link LeaseSettings#stopTimeout()} for why the default is {@code leaseDuration - renewDeadline}.
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
      SettingsChecks.leaseName(leaseName);
      SettingsChecks.namespace(namespace);
      SettingsChecks.timings(leaseDuration, renewDeadline, retryPeriod);
      Duration timeout = SettingsChecks.requestTimeout(requestTimeout, renewDeadline);
      Duration budget = SettingsChecks.healthBudget(healthBudget, leaseDuration, renewDeadline);
      Duration stop = SettingsChecks.stopTimeout(stopTimeout, leaseDuration, renewDeadline);
      if (lossPolicy == null) {
        throw new InvalidElectionSettingException("lossPolicy", null,
            "LossPolicy.exit(), LossPolicy.recontend() or LossPolicy.custom(handler)",
            "pass a loss policy or leave the default, LossPolicy.exit()");
      }
      if (serviceAccountNamespaceFile == null) {
        throw new InvalidElectionSettingException("serviceAccountNamespaceFile", null, "a file path",
            "leave the default " + SERVICE_ACCOUNT_NAMESPACE_FILE + " or pass the file your pods mount");
      }
      return new LeaseSettings(this, SettingsChecks.identity(identity, environment), timeout, budget, stop);
    }
  }
}
