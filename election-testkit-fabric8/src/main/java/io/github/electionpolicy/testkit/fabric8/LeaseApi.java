package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * A Lease API for tests of a fabric8 controller: an embedded API server (fabric8's mock API server in CRUD
 * mode on a loopback port, which enforces {@code resourceVersion} conflicts with 409 and answers
 * SelfSubjectAccessReviews like a real server), one client per replica behind a proxy the test can cut, and
 * the server's own record of every Lease write. With {@code -Delection.it.kubeconfig=PATH} it talks to a real
 * API server instead, in a fresh namespace (see {@link ApiServerTarget}).
 *
 * <p>In JUnit 5 tests use {@link LeaseApiExtension}, which starts one for each test and closes it after. Code
 * that is not a Jupiter test (a jqwik property, a benchmark, a demo) starts one itself:
 *
 * <pre>{@code
 * try (LeaseApi api = LeaseApi.builder().namespace("orders").start()) {
 *   KubernetesClient client = api.client();
 *   ...
 * }
 * }</pre>
 *
 * <p>What only the embedded server can do ({@link #denyAccess}, {@link #stopServer}, {@link #mockServer},
 * {@link ReplicaLink#requestCount()}) throws {@link IllegalStateException} against a real server; a test that
 * needs it calls {@link #assumeEmbedded()} first and is skipped there. The network faults of {@link ReplicaLink}
 * work against a real server on a loopback address too (each replica has a TCP proxy that passes TLS through).
 *
 * <p>Thread-safe: replicas may use their clients from any thread. Close it once; closing closes every client,
 * watch and proxy it handed out, then stops the server (or deletes the namespace).
 */
public interface LeaseApi extends AutoCloseable {

  /** The start of the {@code User-Agent} of every replica's client; the replica's name follows it. */
  String USER_AGENT_PREFIX = "election-testkit-fabric8/";

  /**
   * A builder with the defaults: namespace {@code election-test}, the target chosen by {@link
   * ApiServerTarget#fromSystemProperties()}, access reviews answered.
   *
   * @return a new builder
   */
  static Builder builder() {
    return new Builder();
  }

  /**
   * Whether this is the embedded server.
   *
   * @return {@code false} against a real API server
   */
  boolean isEmbedded();

  /**
   * Skips the calling test (a JUnit assumption) unless this is the embedded server. A test that injects
   * faults, denies verbs or stops the server calls it first, which also says so to the reader.
   */
  void assumeEmbedded();

  /**
   * The namespace every client defaults to: the configured one on the embedded server; against a real server,
   * a namespace this fixture created for this test only (the configured name and a random suffix), deleted
   * when the fixture closes.
   *
   * @return the namespace
   */
  String namespace();

  /**
   * The API server's URL: the embedded server's own address (through no proxy), or the kubeconfig's server.
   *
   * @return the URL, ending in {@code /}
   */
  String url();

  /**
   * A client for a new replica with a generated name: shorthand for {@code replica(name).client()}.
   *
   * @return a client of its own, closed with the fixture
   */
  KubernetesClient client();

  /**
   * A new replica's link to the server: its own client and, on the embedded server, its own proxy.
   *
   * @param name names the replica in its client's {@code User-Agent} and in request counts
   * @return the link, closed with the fixture
   */
  ReplicaLink replica(String name);

  /**
   * Every Lease write the server accepted so far, in every Lease of {@link #namespace()} (on the embedded
   * server: of every namespace), in the order of their resource versions.
   *
   * @return a snapshot
   */
  List<LeaseWrite> leaseWrites();

  /**
   * Like {@link #leaseWrites()}, for one Lease of {@link #namespace()}.
   *
   * @param leaseName the Lease's name
   * @return a snapshot
   */
  List<LeaseWrite> leaseWrites(String leaseName);

  /**
   * Reads a Lease of {@link #namespace()} now.
   *
   * @param leaseName the Lease's name
   * @return the Lease, or empty when it does not exist
   */
  Optional<Lease> lease(String leaseName);

  /**
   * Starts watching a Lease of {@link #namespace()} and returns the holder identity of every event, in order
   * ({@code ""} for none); the watch ends when the fixture closes.
   *
   * @param leaseName the Lease's name
   * @return a live, thread-safe list that grows as events arrive
   */
  List<String> watchHolders(String leaseName);

  /**
   * Writes another holder into an existing Lease, as a foreign writer would, reading it again after each
   * conflict.
   *
   * @param leaseName the Lease's name in {@link #namespace()}
   * @param holder the holder identity to write
   * @throws IllegalStateException if the Lease does not exist
   */
  void overwriteHolder(String leaseName, String holder);

  /**
   * From now on SelfSubjectAccessReviews for these verbs come back denied; every other verb is allowed. An
   * empty set allows everything again. Embedded server only.
   *
   * @param verbs verbs such as {@code "update"} or {@code "watch"}
   * @throws IllegalStateException against a real API server
   */
  void denyAccess(Set<String> verbs);

  /**
   * Stops the embedded server for good, as in an API server outage: new connections are refused and open ones
   * end. Embedded server only.
   *
   * @throws IllegalStateException against a real API server
   */
  void stopServer();

  /**
   * The embedded fabric8 mock server, for what the fixture does not wrap: {@code expect()} (an expectation
   * wins over the fixture's own answers), {@code takeRequest}, {@code getRequestCount}. Embedded server only.
   *
   * @return the server
   * @throws IllegalStateException against a real API server
   */
  KubernetesMockServer mockServer();

  /** Closes every client, watch and proxy handed out, then stops the server or deletes the namespace. */
  @Override
  void close();

  /**
   * Configures and starts a {@link LeaseApi}, or configures a {@link LeaseApiExtension}. Not thread-safe.
   *
   * <pre>{@code
   * LeaseApi api = LeaseApi.builder().namespace("orders").answerAccessReviews(false).start();
   * }</pre>
   */
  final class Builder {

    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?");

    private String namespace = "election-test";
    private ApiServerTarget target;
    private boolean answerAccessReviews = true;
    private UnaryOperator<Dispatcher> dispatcher = UnaryOperator.identity();

    Builder() {}

    Builder copy() {
      Builder copy = new Builder();
      copy.namespace = namespace;
      copy.target = target;
      copy.answerAccessReviews = answerAccessReviews;
      copy.dispatcher = dispatcher;
      return copy;
    }

    /**
     * The namespace clients default to; against a real server, the start of the name of the namespace
     * created for each test.
     *
     * @param namespace a DNS label of at most 54 characters; default {@code election-test}
     * @return this builder
     * @throws IllegalArgumentException if it is not such a label
     */
    public Builder namespace(String namespace) {
      Objects.requireNonNull(namespace, "namespace");
      if (namespace.length() > 54 || !DNS_LABEL.matcher(namespace).matches()) {
        throw new IllegalArgumentException("namespace=\"" + namespace + "\" is not valid: accepted values are "
            + "DNS labels of at most 54 characters (lower-case letters, digits and '-', starting and ending with "
            + "a letter or digit; 9 characters are kept for the random suffix used against a real server); "
            + "fix: use a name such as \"orders-test\"");
      }
      this.namespace = namespace;
      return this;
    }

    /**
     * Which server to use; by default {@link ApiServerTarget#fromSystemProperties()}, read at start.
     *
     * @param target the target
     * @return this builder
     */
    public Builder target(ApiServerTarget target) {
      this.target = Objects.requireNonNull(target, "target");
      return this;
    }

    /**
     * Whether the embedded server answers SelfSubjectAccessReviews (allowed unless {@link
     * LeaseApi#denyAccess denied}); {@code true} by default. With {@code false} the CRUD store handles them and
     * rejects each with HTTP 422, as fabric8's plain mock server does: for testing how a tool reports a review
     * API that does not work. A real server always answers.
     *
     * @param answer whether to answer
     * @return this builder
     */
    public Builder answerAccessReviews(boolean answer) {
      this.answerAccessReviews = answer;
      return this;
    }

    /**
     * Wraps the embedded server's dispatcher, e.g. to delay, reorder or count requests; the wrapper sees each
     * request before the fixture does and calls the given dispatcher to have it handled. Ignored against a real
     * server: a test that relies on it calls {@link LeaseApi#assumeEmbedded()}.
     *
     * @param decorator returns the dispatcher the server uses, given the fixture's
     * @return this builder
     */
    public Builder dispatcher(UnaryOperator<Dispatcher> decorator) {
      this.dispatcher = Objects.requireNonNull(decorator, "decorator");
      return this;
    }

    /**
     * Starts the server (or connects to the real one and creates the namespace).
     *
     * @return the running Lease API, which the caller closes
     * @throws IllegalArgumentException if {@value ApiServerTarget#KUBECONFIG_PROPERTY} is set to no readable
     *     file
     * @throws IllegalStateException if the embedded server cannot serve on this class path: fabric8's mock
     *     server runs on Vert.x, and with a Netty older than the one Vert.x is built with (a Spring Boot BOM
     *     manages Netty for the whole build) every request would fail; the message names the Netty to manage and
     *     how
     */
    public LeaseApi start() {
      ApiServerTarget chosen = target != null ? target : ApiServerTarget.fromSystemProperties();
      if (chosen instanceof ApiServerTarget.Kubeconfig kubeconfig) {
        return KubeconfigLeaseApi.start(kubeconfig.path(), namespace);
      }
      return EmbeddedLeaseApi.start(namespace, answerAccessReviews, dispatcher);
    }
  }
}
