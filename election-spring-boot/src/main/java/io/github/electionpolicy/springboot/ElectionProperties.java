package io.github.electionpolicy.springboot;

import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.fabric8.Readiness;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code election.*} configuration properties, bound by Spring Boot from {@code application.yml}, the
 * environment or the command line. Binding checks only the types (a duration must parse as one); every other
 * rule is the library's own, applied when the context starts: {@link ElectionAutoConfiguration} builds the
 * {@link io.github.electionpolicy.ElectionPolicy}, the {@link io.github.electionpolicy.Substrate} and the
 * {@link io.github.electionpolicy.fabric8.LeaseSettings} from these values, and whatever they reject fails
 * the start-up with the library's {@link io.github.electionpolicy.InvalidElectionSettingException} message.
 *
 * <pre>{@code
 * election:
 *   lease-name: orders-controller        # required
 *   namespace: shop                      # else the pod's namespace, else the client's
 *   lease-duration: 15s                  # the defaults, shown for clarity
 *   renew-deadline: 10s
 *   retry-period: 2s
 *   loss-policy: exit                    # or recontend, or custom with a LossHandler bean
 *   readiness: connected                 # or leader-only
 *   leadership-events: true              # Events on the Lease when leadership changes
 *   substrate:
 *     name: kubernetes
 *     uses-kubernetes-api: true
 * }</pre>
 *
 * <p>Durations take a unit ({@code 15s}, {@code 1500ms}); a bare number is read as milliseconds, as
 * everywhere in Spring Boot. The components of properties without a default ({@code leaseName},
 * {@code namespace}, {@code identity}, {@code requestTimeout}, {@code healthBudget}, {@code stopTimeout}) are
 * {@code null} when not set, and the library then applies its own default, which may derive from other
 * settings; the other components always hold a value.
 *
 * <p>An immutable record; thread-safe.
 *
 * <p>The {@code @param} texts below are also the descriptions IDEs show (the configuration processor copies
 * them into {@code META-INF/spring-configuration-metadata.json}), hence plain sentences without tags.
 *
 * @param enabled Whether to elect at all. False turns the whole auto-configuration off: no runner, no health
 *     indicators, and the LeaderService beans are never started by it. Not the kill switch, which keeps the
 *     runner and starts the services at once, unelected.
 * @param killSwitchVariable The environment variable read as the kill switch (unset or true: elect; false:
 *     run unelected, only safe with one replica). Looked up in Spring's environment, so a system property or
 *     a property of that name counts too.
 * @param substrate What the application's work runs on, which decides whether it contends outside a pod.
 * @param leaseName The name of the coordination.k8s.io/v1 Lease the replicas share. Required; a DNS-1123
 *     subdomain.
 * @param namespace The namespace of the Lease. When not set: the pod's own namespace (from its service
 *     account), else the Kubernetes client's.
 * @param identity The holder identity, unique per process. When not set: POD_NAME, else HOSTNAME, else the
 *     host name, each with a random suffix.
 * @param leaseDuration How long followers wait after the last change they saw before taking the Lease over.
 *     Whole seconds.
 * @param renewDeadline How long the leader keeps leading without a successful renewal. Shorter than the lease
 *     duration.
 * @param retryPeriod How often the leader renews. The renew deadline must exceed 1.2 retry periods.
 * @param requestTimeout The timeout of each Lease request. When not set: half the renew deadline.
 * @param healthBudget How long without a successful Lease call before the liveness probe fails. When not set:
 *     lease duration + renew deadline.
 * @param stopTimeout How long the runner waits for the LeaderService beans to stop, on shutdown and after a
 *     loss. When not set: lease duration - renew deadline.
 * @param lossPolicy What happens after leadership was lost and the services stopped: exit closes the
 *     application context and exits with status 1; recontend contends again; custom asks the application's
 *     LossHandler bean.
 * @param readiness Which replicas the readiness probe calls ready: connected (leader and followers in touch
 *     with the API server) or leader-only.
 * @param rbacPreflight Whether to check with SelfSubjectAccessReviews that the Lease may be used before
 *     contending.
 * @param leadershipEvents Whether to record each leadership change as a Kubernetes Event on the Lease (became
 *     leader, lost leadership with the cause, stopped leading, reason LeaderElection), as client-go does. Needs
 *     create on events in the namespace; without it one warning is logged and the election runs unrecorded.
 * @param phase The SmartLifecycle phase of the runner: it starts after the beans of lower phases (the web
 *     server among them) and stops before them.
 */
@ConfigurationProperties(ElectionProperties.PREFIX)
public record ElectionProperties(
    @DefaultValue("true") boolean enabled,
    @DefaultValue(io.github.electionpolicy.ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE) String killSwitchVariable,
    @DefaultValue SubstrateProperties substrate,
    String leaseName,
    String namespace,
    String identity,
    @DefaultValue("15s") Duration leaseDuration,
    @DefaultValue("10s") Duration renewDeadline,
    @DefaultValue("2s") Duration retryPeriod,
    Duration requestTimeout,
    Duration healthBudget,
    Duration stopTimeout,
    @DefaultValue("exit") LossPolicy.Kind lossPolicy,
    @DefaultValue("connected") Readiness readiness,
    @DefaultValue("true") boolean rbacPreflight,
    @DefaultValue("true") boolean leadershipEvents,
    @DefaultValue("" + ElectionLifecycle.DEFAULT_PHASE) int phase) {

  /** The prefix of every property: {@value}. */
  public static final String PREFIX = "election";

  /**
   * Puts the defaults back for a property given an empty value ({@code election.readiness=}); a duration left
   * empty stays {@code null} and gets the library's default.
   *
   * @param enabled as bound; see {@link #enabled()}
   * @param killSwitchVariable as bound; see {@link #killSwitchVariable()}
   * @param substrate as bound; see {@link #substrate()}
   * @param leaseName as bound; see {@link #leaseName()}
   * @param namespace as bound; see {@link #namespace()}
   * @param identity as bound; see {@link #identity()}
   * @param leaseDuration as bound; see {@link #leaseDuration()}
   * @param renewDeadline as bound; see {@link #renewDeadline()}
   * @param retryPeriod as bound; see {@link #retryPeriod()}
   * @param requestTimeout as bound; see {@link #requestTimeout()}
   * @param healthBudget as bound; see {@link #healthBudget()}
   * @param stopTimeout as bound; see {@link #stopTimeout()}
   * @param lossPolicy as bound; see {@link #lossPolicy()}
   * @param readiness as bound; see {@link #readiness()}
   * @param rbacPreflight as bound; see {@link #rbacPreflight()}
   * @param leadershipEvents as bound; see {@link #leadershipEvents()}
   * @param phase as bound; see {@link #phase()}
   */
  public ElectionProperties {
    killSwitchVariable = killSwitchVariable == null
        ? io.github.electionpolicy.ElectionPolicy.DEFAULT_KILL_SWITCH_VARIABLE : killSwitchVariable;
    substrate = substrate == null ? new SubstrateProperties(null, true) : substrate;
    lossPolicy = lossPolicy == null ? LossPolicy.Kind.EXIT : lossPolicy;
    readiness = readiness == null ? Readiness.CONNECTED : readiness;
  }

  /**
   * The {@code election.substrate.*} properties: what the application's work runs on. An immutable record;
   * thread-safe.
   *
   * <pre>{@code
   * election:
   *   substrate:
   *     name: direct
   *     uses-kubernetes-api: false   # outside a pod, such a process runs unelected
   * }</pre>
   *
   * @param name A short, non-blank name for the decision's log line.
   * @param usesKubernetesApi Whether the work reads or writes through the Kubernetes API. If it does, the
   *     process contends even outside a pod.
   */
  public record SubstrateProperties(
      @DefaultValue(SubstrateProperties.DEFAULT_NAME) String name,
      @DefaultValue("true") boolean usesKubernetesApi) {

    /** The default substrate's name: {@value}. */
    public static final String DEFAULT_NAME = "kubernetes";

    /**
     * Puts the default name back when none is bound.
     *
     * @param name as bound; see {@link #name()}
     * @param usesKubernetesApi as bound; see {@link #usesKubernetesApi()}
     */
    public SubstrateProperties {
      name = name == null ? DEFAULT_NAME : name;
    }
  }
}
