package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.immutables.value.Value;

/**
 * How to contend for the leader Lease: which Lease, as whom, with which timings, and what to do when
 * leadership is lost. An immutable value; every check runs in {@link Builder#build()}, which fails with an
 * {@link InvalidElectionSettingException} naming the setting, its value, what would be accepted and how to
 * fix it. The builder's setters reject {@code null} at once with a {@link NullPointerException} naming the
 * setting; leave a setting out to get its default.
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
 * LeaseSettings slower = settings.toBuilder().leaseDuration(Duration.ofSeconds(30)).build();
 * }</pre>
 *
 * <p>Settings are plain values: building the same settings twice gives equal values. Nothing is resolved
 * from the process at build time; the identity (when none is set) and the namespace (when none is set) are
 * resolved by {@link ElectionRunner} when it starts, and only if it contends.
 *
 * <p>Instances are immutable and thread-safe. The {@link Builder} is not thread-safe.
 *
 * @see ElectionRunner
 */
@Value.Immutable
@ImmutablesStyle
public abstract class LeaseSettings {

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

  // Only the generated implementation in this package extends it: every instance went through check().
  LeaseSettings() {}

  /**
   * Starts a builder with the defaults: 15 s / 10 s / 2 s timings, {@link LossPolicy#exit()}, and no explicit
   * namespace or identity (both resolved at start; see {@link #namespace()} and {@link #identity()}).
   *
   * @return a new builder; only {@code leaseName(String)} is required
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * A builder holding the values of these settings, to derive other settings from them. The three derived
   * settings ({@link #requestTimeout()}, {@link #healthBudget()}, {@link #stopTimeout()}) are copied only when
   * they differ from what the timings give: one still at its default keeps following the timings, so after
   * {@code toBuilder().leaseDuration(...).renewDeadline(...)} it is derived from the new ones; one set to
   * another value is kept as set.
   *
   * <pre>{@code
   * LeaseSettings recontending = settings.toBuilder().lossPolicy(LossPolicy.recontend()).build();
   * LeaseSettings slower = settings.toBuilder().leaseDuration(Duration.ofSeconds(60))
   *     .renewDeadline(Duration.ofSeconds(40)).retryPeriod(Duration.ofSeconds(5)).build();
   * }</pre>
   *
   * @return a new builder, independent of these settings
   */
  public final Builder toBuilder() {
    Builder builder = builder();
    builder.leaseName(leaseName())
        .namespace(namespace())
        .identity(identity())
        .environment(environment())
        .leaseDuration(leaseDuration())
        .renewDeadline(renewDeadline())
        .retryPeriod(retryPeriod())
        .lossPolicy(lossPolicy())
        .leadershipEvents(leadershipEvents())
        .serviceAccountNamespaceFile(serviceAccountNamespaceFile());
    if (!requestTimeout().equals(renewDeadline().dividedBy(2))) {
      builder.requestTimeout(requestTimeout());
    }
    if (!healthBudget().equals(SettingsChecks.sumOrFirst(leaseDuration(), renewDeadline()))) {
      builder.healthBudget(healthBudget());
    }
    if (!stopTimeout().equals(SettingsChecks.safetyMargin(leaseDuration(), renewDeadline()))) {
      builder.stopTimeout(stopTimeout());
    }
    return builder;
  }

  /**
   * The name of the {@code coordination.k8s.io/v1} Lease to contend for. Required.
   *
   * @return a valid DNS-1123 subdomain
   */
  public abstract String leaseName();

  /**
   * The namespace set explicitly. When empty, the runner uses the {@link #serviceAccountNamespaceFile()},
   * else the client's namespace.
   *
   * @return the explicit namespace, if any; a DNS-1123 label
   */
  public abstract Optional<String> namespace();

  /**
   * The identity set explicitly, used as given (no suffix is added); it must be unique among the replicas.
   * When empty, a contending {@link ElectionRunner} resolves one when it starts ({@link
   * ElectionRunner#identity()}): {@value #POD_NAME_VARIABLE}, else {@value #HOSTNAME_VARIABLE} (both read
   * through {@link #environment()}), else the host name the JVM resolves, each with {@code -} and 5 random
   * characters appended; else a random identity. Running unelected, no identity is ever needed.
   *
   * @return the explicit identity, if any; not blank
   */
  public abstract Optional<String> identity();

  /**
   * The environment from which a contending runner reads the default identity ({@value #POD_NAME_VARIABLE},
   * else {@value #HOSTNAME_VARIABLE}); {@link Environment#of(java.util.Map)} in tests.
   *
   * @return {@link Environment#system()} unless set
   */
  @Value.Default
  public Environment environment() {
    return Environment.system();
  }

  /**
   * How long followers wait, after they last saw the Lease change, before taking it over.
   *
   * @return whole seconds, at least one; {@link #DEFAULT_LEASE_DURATION} unless set
   */
  @Value.Default
  public Duration leaseDuration() {
    return DEFAULT_LEASE_DURATION;
  }

  /**
   * How long the leader keeps leading without a successful renewal, measured on a monotonic clock from
   * the moment it sent its last successful renewal.
   *
   * @return shorter than the lease duration; {@link #DEFAULT_RENEW_DEADLINE} unless set
   */
  @Value.Default
  public Duration renewDeadline() {
    return DEFAULT_RENEW_DEADLINE;
  }

  /**
   * How often the leader renews and followers re-read the Lease.
   *
   * @return positive, less than renew deadline / 1.2; {@link #DEFAULT_RETRY_PERIOD} unless set
   */
  @Value.Default
  public Duration retryPeriod() {
    return DEFAULT_RETRY_PERIOD;
  }

  /**
   * The timeout of each single Lease request, whatever the timeouts of the client passed in.
   *
   * @return between {@link #MINIMUM_REQUEST_TIMEOUT} and half the renew deadline; half the renew deadline
   *     unless set
   */
  @Value.Default
  public Duration requestTimeout() {
    return renewDeadline().dividedBy(2);
  }

  /**
   * How long a contending process may go without a successful Lease call before it reports itself not
   * live.
   *
   * @return at least the renew deadline; lease duration + renew deadline unless set
   */
  @Value.Default
  public Duration healthBudget() {
    // Computed before the checks run: an absurd duration must reach its own check, not overflow here.
    return SettingsChecks.sumOrFirst(leaseDuration(), renewDeadline());
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
   * @return positive; {@code leaseDuration - renewDeadline} unless set
   */
  @Value.Default
  public Duration stopTimeout() {
    return SettingsChecks.safetyMargin(leaseDuration(), renewDeadline());
  }

  /**
   * What happens after leadership was lost and the reconcilers stopped.
   *
   * @return {@link LossPolicy#exit()} unless set
   */
  @Value.Default
  public LossPolicy lossPolicy() {
    return LossPolicy.exit();
  }

  /**
   * Whether the runner records its leadership changes as Kubernetes Events on the Lease, as client-go's elector
   * does: {@code <identity> became leader}, {@code <identity> lost leadership} (with the cause) and {@code
   * <identity> stopped leading}, each naming the term's fencing token, reason {@code LeaderElection}, so that
   * {@code kubectl describe lease} and {@code kubectl get events} show who led when. Best effort: written off
   * the runner's loop, one at a time, each bounded by {@link #requestTimeout()} and never retried; a denied
   * {@code create} on {@code events} is reported once by a WARN and never affects the election. {@code false}
   * records none (and the RBAC preflight does not ask about events).
   *
   * @return {@code true} unless set
   */
  @Value.Default
  public boolean leadershipEvents() {
    return true;
  }

  /**
   * The file read for the namespace when none is set explicitly; for tests and unusual mounts.
   *
   * @return {@link #SERVICE_ACCOUNT_NAMESPACE_FILE} unless set
   */
  @Value.Default
  public Path serviceAccountNamespaceFile() {
    return SERVICE_ACCOUNT_NAMESPACE_FILE;
  }

  /** Runs every check once the values, defaults included, are known; the first failure is thrown. */
  @Value.Check
  final void check() {
    SettingsChecks.leaseName(leaseName());
    // Not ifPresent(SettingsChecks::namespace): a method reference is a class spun at its first use, part of a
    // fresh JVM's first start() (issue 16).
    if (namespace().isPresent()) {
      SettingsChecks.namespace(namespace().get());
    }
    if (identity().isPresent()) {
      SettingsChecks.identity(identity().get());
    }
    SettingsChecks.timings(leaseDuration(), renewDeadline(), retryPeriod());
    SettingsChecks.requestTimeout(requestTimeout(), renewDeadline());
    SettingsChecks.healthBudget(healthBudget(), renewDeadline());
    SettingsChecks.stopTimeout(stopTimeout());
  }

  /**
   * The settings as the runner logs them, durations in short form; the environment is left out.
   *
   * @return e.g. {@code LeaseSettings{leaseName=orders-controller, namespace=<resolved at start>, ...}}
   */
  @Override
  public final String toString() {
    return "LeaseSettings{leaseName=" + leaseName() + ", namespace=" + namespace().orElse("<resolved at start>")
        + ", identity=" + identity().orElse("<resolved at start>")
        + ", leaseDuration=" + Durations.format(leaseDuration())
        + ", renewDeadline=" + Durations.format(renewDeadline()) + ", retryPeriod="
        + Durations.format(retryPeriod()) + ", requestTimeout=" + Durations.format(requestTimeout())
        + ", healthBudget=" + Durations.format(healthBudget()) + ", stopTimeout="
        + Durations.format(stopTimeout()) + ", lossPolicy=" + lossPolicy()
        + (leadershipEvents() ? "" : ", leadershipEvents=false") + "}";
  }

  /**
   * Builds {@link LeaseSettings}. Each setter rejects {@code null} at once with a
   * {@link NullPointerException} naming the setting; every other check runs in {@link #build()}. Not
   * thread-safe: use one builder from one thread.
   *
   * <pre>{@code
   * LeaseSettings settings = LeaseSettings.builder()
   *     .leaseName("orders-controller")
   *     .namespace("shop")
   *     .lossPolicy(LossPolicy.recontend())
   *     .build();
   * }</pre>
   */
  public static final class Builder extends ImmutableLeaseSettings.Builder {
    Builder() {}

    /**
     * Checks every setting, defaults included, and builds the value.
     *
     * @return the settings
     * @throws InvalidElectionSettingException naming the first setting that is not valid, {@code leaseName}
     *     when it was never set
     */
    @Override
    public LeaseSettings build() {
      try {
        return super.build();
      } catch (IllegalStateException missing) {
        // The generated builder's only complaint: a required attribute not set, and leaseName is the only one.
        throw SettingsChecks.missingLeaseName(missing);
      }
    }
  }
}
