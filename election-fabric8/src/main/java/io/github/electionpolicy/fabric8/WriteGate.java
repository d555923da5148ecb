package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.HttpClient;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A write gate: a view of your {@link KubernetesClient} through which every request that could change the
 * cluster fails fast with a {@link TermEndedException} once the {@link LeadershipTerm} it was opened for is
 * no longer {@linkplain LeadershipTerm#isValid() valid}. Reads pass always.
 *
 * <pre>{@code
 * final class OrdersReconciler implements LeaderService {
 *   private final KubernetesClient client;            // yours; you close it when the process ends
 *   private ExecutorService worker;
 *
 *   public void start(LeadershipTerm term) {
 *     KubernetesClient gated = WriteGate.gate(client, term);
 *     worker = Executors.newSingleThreadExecutor();
 *     worker.submit(() -> {
 *       try (gated) {
 *         while (term.isValid()) {
 *           ConfigMap seen = gated.configMaps().withName("orders").get();
 *           seen.getData().put("leader-term", Integer.toString(term.leaseTransitions()));
 *           gated.configMaps().resource(seen).update();   // conditional on the resourceVersion read
 *         }
 *       } catch (TermEndedException e) {
 *         // the term ended between the check above and the write: the write was not sent
 *       }
 *     });
 *   }
 *
 *   public void stop() {
 *     worker.shutdownNow();
 *   }
 * }
 * }</pre>
 *
 * <p><b>What is gated.</b> Every request whose HTTP method is not {@code GET}, {@code HEAD} or {@code OPTIONS},
 * that is every {@code POST}, {@code PUT}, {@code PATCH} and {@code DELETE} (creates, updates, patches, server-side
 * applies, deletes, evictions, scale and status writes, dry runs and access reviews included). The gate asks
 * {@link LeadershipTerm#isValid()} in an HTTP interceptor that fabric8 runs after your client's own interceptors,
 * right before it hands each attempt to the HTTP client. A refused request throws a {@link TermEndedException} from
 * the fabric8 call itself ({@code create()}, {@code update()}, ...), on the calling thread. Reads ({@code get},
 * {@code list}, {@code watch}, informers, logs) pass whatever the term. {@link #gate(KubernetesClient, Check)} opens
 * the same gate with a check of your own in place of the one term's, for work whose term depends on what sends the
 * write (election-josdk's sharded operator checks each write against the shard of the reconciliation that sends it);
 * such a check may also change the body a write is sent with ({@link Check#bodyToSend}), to make it conditional.
 *
 * <p><b>No automatic retries.</b> The gated client sends each request once, whatever your client's
 * {@code requestRetryBackoffLimit}: a failed request (a 5xx, a timeout) reaches your code at once, which retries
 * in its reconcile loop after checking the term again. A retry scheduled by fabric8 could otherwise outlive the
 * term it was sent for, and with fabric8 7.x a retry that the gate refuses is lost by fabric8's retry helper
 * (fabric8io/kubernetes-client#8105), leaving the call waiting for ever.
 *
 * <p><b>Unelected terms.</b> When the process runs unelected ({@link LeadershipTerm#isElected()} false), the term
 * is valid until the runner is {@linkplain ElectionRunner#close() closed}; the gate lets writes through until
 * then and refuses them afterwards.
 *
 * <p><b>What it does not guarantee.</b> The gate narrows the window in which a former leader can write; it does
 * not close it, and it is not fencing:
 * <ul>
 *   <li>A request that passed the gate before the term ended can still land afterwards: it may be on the wire,
 *       queued in the HTTP client, or waiting in the API server. To make such a late write harmless, write
 *       conditionally: update with the {@code resourceVersion} you read, so the API server rejects it with 409
 *       if anyone (the next leader) changed the object since; and store {@link LeadershipTerm#leaseTransitions()}
 *       with your data, so later writers can tell an older term's write.</li>
 *   <li>The term is judged on this process's monotonic clock. A process that was paused (GC, a suspended VM)
 *       and resumes with its renew deadline passed finds the term expired and is refused, but only if the check
 *       runs after the pause: a pause between the check and the send is not seen.</li>
 *   <li>An interceptor of your client that re-sends a request after a failure (fabric8's token refresh re-sends
 *       after a 401) does so without asking the gate again.</li>
 *   <li>Exec, attach and port-forward open WebSockets with {@code GET}, so they pass.</li>
 *   <li>Writes made through any other client, including the one you passed in, are not gated.</li>
 * </ul>
 *
 * <p><b>Ownership.</b> The gated client borrows your client's HTTP client (connections, TLS settings, credentials
 * and your own interceptors) and uses its configuration (master URL, namespace, impersonation, request settings,
 * serialization); the request settings, impersonation included, are those your client's requests carry, also for a
 * client you derived with {@code newClient(RequestConfig)}, whose {@code getConfiguration()} is its base's.
 * Closing the gated client stops the informers started through it and makes it refuse further requests, but it
 * never closes your client or its HTTP client; closing your client, on the other hand, ends the gated client too.
 * A watch opened through the gated client runs on your client's connections and is not closed with the gated
 * client: close the {@code Watch} itself.
 *
 * <p>Thread-safe: the gated client is as thread-safe as any fabric8 client, the check is a read of the term's
 * state, and {@link #gate} may be called from any thread, once per term or more often.
 */
public final class WriteGate {

  private static final AtomicLong GATES = new AtomicLong();

  private WriteGate() {}

  /**
   * Opens a view of {@code client} whose writes pass only while {@code term} is valid.
   *
   * @param client your client; it stays yours: closing the view does not close it
   * @param term the term that must be valid for a write to be sent, usually the one passed to
   *     {@link LeaderService#start(LeadershipTerm)}
   * @return a new client that refuses every {@code POST}, {@code PUT}, {@code PATCH} and {@code DELETE} with a
   *     {@link TermEndedException} once the term is no longer valid; close it when the term's work is done
   * @throws NullPointerException if {@code client} or {@code term} is null
   */
  public static KubernetesClient gate(KubernetesClient client, LeadershipTerm term) {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(term, "term");
    return open(client, new WriteGateInterceptor(term));
  }

  /**
   * Opens a view of {@code client} whose writes pass only when {@code check} lets them: for a gate whose term is not
   * one for the client's whole life but depends on the work that sends the write, such as election-josdk's sharded
   * operator, whose writes are each checked against the term of the shard the reconciliation on the sending thread
   * belongs to. Everything else is as for {@link #gate(KubernetesClient, LeadershipTerm)}: reads pass without a check,
   * the view makes no automatic retries, and it borrows {@code client}'s HTTP client.
   *
   * @param client your client; it stays yours: closing the view does not close it
   * @param check asked before each write is sent
   * @return a new client whose every {@code POST}, {@code PUT}, {@code PATCH} and {@code DELETE} is sent only if
   *     {@code check} returned normally; close it when its work is done
   * @throws NullPointerException if {@code client} or {@code check} is null
   */
  public static KubernetesClient gate(KubernetesClient client, Check check) {
    Objects.requireNonNull(client, "client");
    Objects.requireNonNull(check, "check");
    return open(client, new WriteGateInterceptor(check, client.getConfiguration().getMasterUrl()));
  }

  private static KubernetesClient open(KubernetesClient client, WriteGateInterceptor interceptor) {
    // A name of its own per gate, so a gate opened on a gated client adds a check instead of replacing one.
    String interceptorName = "io.github.electionpolicy.write-gate-" + GATES.incrementAndGet();
    HttpClient.DerivedClientBuilder gatedHttp = client.getHttpClient().newBuilder()
        .addOrReplaceInterceptor(interceptorName, interceptor);
    KubernetesClient gated = new KubernetesClientBuilder()
        .withConfig(client.getConfiguration())
        .withKubernetesSerialization(client.getKubernetesSerialization())
        .withHttpClientFactory(BorrowedHttpClient.factory(gatedHttp))
        .build();
    // Retries are a per-request setting of fabric8's operations: a view of the gated client with none, whose
    // requests carry the request settings (impersonation included) of the user's client's requests. Without
    // retries every attempt is sent, and checked, on the thread that made the call: fabric8 sends a retry from
    // a scheduler thread of its own.
    return DerivedClients.derive(gated, client, requests -> requests.withRequestRetryBackoffLimit(0));
  }

  /**
   * What a gate from {@link WriteGate#gate(KubernetesClient, Check)} asks before it sends a write. It is called for
   * every request whose method is not {@code GET}, {@code HEAD} or {@code OPTIONS}, on the thread that made the call
   * (the gated client makes no automatic retries, so every request is sent from there), right before the request is
   * handed to the HTTP client. Implementations must be thread-safe and quick: they run on every writer's thread.
   *
   * <pre>{@code
   * WriteGate.Check onlyWhileValid = (method, path) -> {
   *   if (!term.isValid()) {
   *     throw new TermEndedException(method, path, term);  // what gate(client, term) does
   *   }
   * };
   * }</pre>
   */
  @FunctionalInterface
  public interface Check {

    /**
     * Lets the write go by returning, or refuses it by throwing: the request is then not sent, and what was thrown
     * reaches the caller of the fabric8 call ({@code create()}, {@code update()}, ...).
     *
     * @param method the HTTP method, upper case, e.g. {@code PATCH}
     * @param path the request path, without the query, below the master URL's own path if it has one (a proxy's,
     *     such as {@code /k8s/clusters/c-1}), e.g. {@code /api/v1/namespaces/shop/configmaps/orders}
     * @throws io.fabric8.kubernetes.client.KubernetesClientException to refuse the write, a {@link
     *     TermEndedException} when it is refused because a term ended
     */
    void beforeWrite(String method, String path);

    /**
     * The body to send with a write that {@link #beforeWrite} let through: by default {@code body} itself, so the
     * request goes as the caller made it. A check may return another body of the same content type instead, to make
     * the write conditional; election-josdk's sharded operator adds the uid of the resource being reconciled to each
     * write of that resource (a JSON Patch {@code test} of {@code /metadata/uid}, {@code metadata.uid} in a merge
     * patch, an apply or a {@code PUT}, a {@code DeleteOptions} precondition), so that the API server refuses the write
     * if the name now belongs to another object. Called on the same thread as {@link #beforeWrite}, right after it.
     *
     * @param method the HTTP method, upper case, e.g. {@code PATCH}
     * @param path the request path, without the query, below the master URL's own path if it has one (a proxy's,
     *     such as {@code /k8s/clusters/c-1}), e.g. {@code /api/v1/namespaces/shop/configmaps/orders}
     * @param contentType the body's content type as fabric8 sends it, e.g. {@code application/json-patch+json}; null
     *     when the request has none
     * @param body the body fabric8 would send, as text; null when the request has none or fabric8 holds it as bytes
     *     or a stream
     * @return the body to send: {@code body} to send the request unchanged, or another body, which is sent with the
     *     same method and content type ({@code application/json} when the request had none)
     * @throws io.fabric8.kubernetes.client.KubernetesClientException to refuse the write: the request is then not sent
     */
    default String bodyToSend(String method, String path, String contentType, String body) {
      return body;
    }
  }
}
