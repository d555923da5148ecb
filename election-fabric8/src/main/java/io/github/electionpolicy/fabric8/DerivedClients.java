package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.Client;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.http.Interceptor;
import java.util.function.UnaryOperator;

/**
 * The clients the library derives from the user's: the same HTTP client (connections, TLS, credentials,
 * interceptors), Config and serialization, with the request settings the user's client's requests carry changed
 * only where the library needs it (its timeouts, no retries, its watch reconnects).
 *
 * <p><b>Where those request settings are.</b> A client made by fabric8's {@code client.newClient(RequestConfig)}
 * (a user impersonating a service account for the election only, say) keeps its {@code getConfiguration()}: the
 * base client's Config, whose RequestConfig is the base's. The derived RequestConfig is held by the client's
 * operation context (from which fabric8's operations take their timeouts and retries; implementation classes only)
 * and, as a tag, by the HTTP client fabric8 derives for it; fabric8's HTTP clients pass themselves to each
 * interceptor as its {@link Interceptor.RequestTags}, and the impersonation interceptor puts the {@code
 * Impersonate-*} headers from that tag, or from the Config's RequestConfig when there is none (fabric8 7.6.1 and
 * 8.0.0 alike). So the tag, read through the public {@code RequestTags}, is the RequestConfig the user's requests
 * go out with, impersonation included; a client that carries none is read from its Config, as fabric8 does.
 *
 * <p><b>Where an informer takes its back-off.</b> Not all of a watch's timing is a request setting. A fabric8
 * informer lists and watches again, after a watch that ended with a 410 Gone or any failure its exception handler
 * lets it retry, once its own back-off has passed, and that back-off starts from the <em>Config's</em> {@code
 * watchReconnectInterval} ({@code BaseOperation.getWatchReconnectInterval()} reads the Config, fabric8 7.6.1 and
 * 8.0.0 alike): a client from {@code newClient(RequestConfig)} keeps the base's. The watch's own reconnects, after
 * its connection dropped, take the interval of the request settings. So {@link #forInformer} changes both, on a
 * client built anew over a copy of the user's Config, as the write gate's is over the user's HTTP client.
 *
 * <p>Thread-safe: stateless; each call reads the user's client and makes a new one.
 */
final class DerivedClients {

  private DerivedClients() {}

  /**
   * A client over {@code userClient}'s HTTP client and Config whose requests carry {@code userClient}'s request
   * settings as {@code change} changes them.
   */
  static KubernetesClient derive(KubernetesClient userClient, UnaryOperator<RequestConfigBuilder> change) {
    return derive(userClient, userClient, change);
  }

  /**
   * A client over {@code over} whose requests carry {@code requestsOf}'s request settings as {@code change}
   * changes them: for a client built anew on the user's HTTP client (the write gate's), which must still send as
   * the user's client does.
   */
  static KubernetesClient derive(KubernetesClient over, Client requestsOf,
      UnaryOperator<RequestConfigBuilder> change) {
    RequestConfig requests = requestConfig(requestsOf);
    RequestConfigBuilder builder = requests == null ? new RequestConfigBuilder() : new RequestConfigBuilder(requests);
    return over.newClient(change.apply(builder).build()).adapt(KubernetesClient.class);
  }

  /**
   * A client for an informer of the library's own (the sharded runner's one list and watch of its Leases): over
   * {@code userClient}'s HTTP client (borrowed: closing the returned client closes neither the user's client nor its
   * HTTP client), and over a copy of its Config and request settings (impersonation included) in which the informer's
   * list-and-watch-again and its watch's reconnects start after {@code reconnectMillis} and double each time, as
   * fabric8 does, up to 32 times that (fabric8's cap: 2^5), with no limit on reconnects and no request retries of
   * the user's (each of which would wait the user's own back-off first). fabric8 starts that back-off again after
   * every list and watch that opened, so its lists also go at a {@link ListPace} of the same intervals, which starts
   * again only after a list and watch that lasted: a server that ends every watch at once gets a list once per cap,
   * not once per first interval. The user's client and the watches they open through it keep their settings.
   *
   * @param reconnectMillis the first interval, at least 1
   */
  static KubernetesClient forInformer(KubernetesClient userClient, int reconnectMillis) {
    return forInformer(userClient, reconnectMillis, ListPace.forInformer(reconnectMillis));
  }

  /** As {@link #forInformer(KubernetesClient, int)}, its lists at {@code pace}, which its owner may restart. */
  static KubernetesClient forInformer(KubernetesClient userClient, int reconnectMillis, ListPace pace) {
    Config config = new ConfigBuilder(userClient.getConfiguration())
        .withAutoConfigure(false) // a copy: read nothing again from the kubeconfig or the environment
        .withWatchReconnectInterval(reconnectMillis)
        .withWatchReconnectLimit(-1)
        .withRequestRetryBackoffLimit(0)
        .build();
    KubernetesClient over = new KubernetesClientBuilder()
        .withConfig(config)
        .withKubernetesSerialization(userClient.getKubernetesSerialization())
        .withHttpClientFactory(BorrowedHttpClient.factory(userClient.getHttpClient().newBuilder(), pace))
        .build();
    return derive(over, userClient, requests -> requests
        .withWatchReconnectInterval(reconnectMillis)
        .withWatchReconnectLimit(-1)
        .withRequestRetryBackoffLimit(0));
  }

  /**
   * The RequestConfig {@code client}'s requests go out with: its HTTP client's tag, or its Config's when there is
   * none (a client not derived with {@code newClient}, or whose HTTP client is not fabric8's own). May be null.
   */
  static RequestConfig requestConfig(Client client) {
    if (client.getHttpClient() instanceof Interceptor.RequestTags tags) {
      RequestConfig tagged = tags.getTag(RequestConfig.class);
      if (tagged != null) {
        return tagged;
      }
    }
    return client.getConfiguration().getRequestConfig();
  }
}
