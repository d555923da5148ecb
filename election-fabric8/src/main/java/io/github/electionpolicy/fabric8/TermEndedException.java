package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Objects;

/**
 * Thrown by a client from {@link WriteGate#gate} for a write attempted after its {@link LeadershipTerm} ended:
 * the request was not sent. The message names the HTTP method, the request path and the term, e.g.
 * {@code refused PUT /api/v1/namespaces/shop/configmaps/orders: the leadership term (holder=orders-7f9c-x2k4q,
 * leaseTransitions=3) is no longer valid; ...}.
 *
 * <p>It is a {@link KubernetesClientException} (with no HTTP status: {@link #getCode()} is not an HTTP code), so
 * a reconcile loop that already handles failed API calls handles it too. The right reaction is to stop the
 * term's work, not to retry: the term will not become valid again, and the next term starts the reconcilers
 * anew.
 *
 * <pre>{@code
 * try {
 *   gated.configMaps().resource(configMap).update();
 * } catch (TermEndedException e) {
 *   log.info("{}", e.getMessage());   // leadership ended; leave the write to the next leader
 *   return;
 * }
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class TermEndedException extends KubernetesClientException {
  private static final long serialVersionUID = 1L;

  /** The HTTP method of the refused request. */
  private final String method;
  /** The path of the refused request. */
  private final String path;
  /** The holder identity of the term that ended. */
  private final String holderIdentity;
  /** The term's leaseTransitions; 0 when unelected. */
  private final int leaseTransitions;
  /** Whether the term came from winning the Lease. */
  private final boolean elected;

  /**
   * Creates the exception for a request refused because {@code term} is no longer valid.
   *
   * @param method the HTTP method of the refused request, e.g. {@code PUT}
   * @param path the path of the refused request, e.g. {@code /api/v1/namespaces/shop/configmaps/orders}
   * @param term the term that is no longer valid
   * @throws NullPointerException if an argument is {@code null}
   */
  public TermEndedException(String method, String path, LeadershipTerm term) {
    super(message(Objects.requireNonNull(method, "method"), Objects.requireNonNull(path, "path"),
        Objects.requireNonNull(term, "term")));
    this.method = method;
    this.path = path;
    this.holderIdentity = term.holderIdentity();
    this.leaseTransitions = term.leaseTransitions();
    this.elected = term.isElected();
  }

  // A copy that keeps the type: fabric8 rethrows an exception that failed a request asynchronously (a retry)
  // through copyAsCause(), so that the stack trace shows the caller.
  private TermEndedException(TermEndedException original) {
    super(original.getMessage(), original);
    this.method = original.method;
    this.path = original.path;
    this.holderIdentity = original.holderIdentity;
    this.leaseTransitions = original.leaseTransitions;
    this.elected = original.elected;
  }

  private static String message(String method, String path, LeadershipTerm term) {
    String which = term.isElected()
        ? "the leadership term (holder=" + term.holderIdentity() + ", leaseTransitions=" + term.leaseTransitions()
            + ") is no longer valid (leadership lost, the runner closed, or the renew deadline passed unrenewed)"
        : "the unelected term of " + term.holderIdentity() + " ended when its runner closed";
    return "refused " + method + " " + path + ": " + which + "; the request was not sent; fix: stop this term's "
        + "work and leave the write to the next term, which starts the reconcilers with a new LeadershipTerm";
  }

  /**
   * A copy of this exception with this one as its cause, of the same type.
   *
   * @return a new {@code TermEndedException} caused by this one
   */
  @Override
  public TermEndedException copyAsCause() {
    return new TermEndedException(this);
  }

  /**
   * The HTTP method of the refused request.
   *
   * @return the method, upper case, e.g. {@code POST}
   */
  public String method() {
    return method;
  }

  /**
   * The path of the refused request, without the query.
   *
   * @return the path, e.g. {@code /apis/apps/v1/namespaces/shop/deployments/orders}
   */
  public String path() {
    return path;
  }

  /**
   * The holder identity of the term that ended.
   *
   * @return the identity
   */
  public String holderIdentity() {
    return holderIdentity;
  }

  /**
   * The {@link LeadershipTerm#leaseTransitions()} of the term that ended.
   *
   * @return the fencing token of that term; 0 when it was unelected
   */
  public int leaseTransitions() {
    return leaseTransitions;
  }

  /**
   * Whether the term that ended came from winning the Lease.
   *
   * @return false when the process ran unelected
   */
  public boolean isElected() {
    return elected;
  }
}
