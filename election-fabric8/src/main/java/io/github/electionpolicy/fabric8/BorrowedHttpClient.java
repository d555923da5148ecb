package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.http.TlsVersion;
import io.fabric8.kubernetes.client.http.WebSocket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;

/**
 * An HTTP client derived from the user's one (fabric8's {@code HttpClient.newBuilder()}: same connections,
 * TLS settings, credentials and interceptors, plus any added to the derived builder) whose {@link #close()} does
 * not close the user's. fabric8's derived clients share one "closed" state with the client they came from, and a
 * {@code KubernetesClient} closes its HTTP client when it is closed; without this wrapper, closing a gated client
 * would close the user's. Its tags are the derived client's, so {@link DerivedClients} reads the request settings
 * of a gated client's requests (fabric8 keeps a derived client's RequestConfig there) as fabric8 sends them.
 */
final class BorrowedHttpClient implements HttpClient, Interceptor.RequestTags {

  private final HttpClient derived;
  // Null but for an informer's client (DerivedClients.forInformer): the pace of its lists, shared by its derivations.
  private final ListPace lists;
  private final AtomicBoolean closed = new AtomicBoolean();

  private BorrowedHttpClient(HttpClient derived, ListPace lists) {
    this.derived = derived;
    this.lists = lists;
  }

  /**
   * A factory for {@code KubernetesClientBuilder} whose only client is built from {@code derivedBuilder}. It
   * ignores the {@code Config}: the user's client applied it (credentials, impersonation, TLS) when it was built.
   */
  static HttpClient.Factory factory(HttpClient.DerivedClientBuilder derivedBuilder) {
    return factory(derivedBuilder, null);
  }

  /**
   * As {@link #factory(HttpClient.DerivedClientBuilder)}, for an informer's client: its lists (GETs that are not
   * watches), and those of the clients derived from it, go out at {@code lists}' pace, which the close ends.
   */
  static HttpClient.Factory factory(HttpClient.DerivedClientBuilder derivedBuilder, ListPace lists) {
    return new HttpClient.Factory() {
      @Override
      public HttpClient.Builder newBuilder(Config config) {
        return new Builder(derivedBuilder, lists);
      }

      @Override
      public HttpClient.Builder newBuilder() {
        return new Builder(derivedBuilder, lists);
      }
    };
  }

  @Override
  public void close() {
    closed.set(true);
    if (lists != null) {
      lists.close();
    }
  }

  @Override
  public boolean isClosed() {
    return closed.get() || derived.isClosed();
  }

  @Override
  public DerivedClientBuilder newBuilder() {
    return new Builder(derived.newBuilder(), lists);
  }

  @Override
  public <T> T getTag(Class<T> type) {
    return derived instanceof Interceptor.RequestTags tags ? tags.getTag(type) : null;
  }

  @Override
  public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, Class<T> type) {
    checkOpen();
    if (lists != null && isList(request)) {
      return lists.send(() -> {
        checkOpen();
        return derived.sendAsync(request, type);
      });
    }
    return derived.sendAsync(request, type);
  }

  /**
   * A GET that is neither a watch nor the next page of a list: an informer's list (its client sends nothing else
   * but its watches).
   */
  private static boolean isList(HttpRequest request) {
    String query = request.uri().getRawQuery();
    return "GET".equals(request.method())
        && (query == null || !query.contains("watch=true") && !query.contains("continue="));
  }

  @Override
  public CompletableFuture<HttpResponse<AsyncBody>> consumeBytes(HttpRequest request,
      AsyncBody.Consumer<List<ByteBuffer>> consumer) {
    checkOpen();
    return derived.consumeBytes(request, consumer);
  }

  @Override
  public WebSocket.Builder newWebSocketBuilder() {
    checkOpen();
    return derived.newWebSocketBuilder();
  }

  @Override
  public HttpRequest.Builder newHttpRequestBuilder() {
    return derived.newHttpRequestBuilder();
  }

  private void checkOpen() {
    if (closed.get()) {
      throw new IllegalStateException("this gated client was closed; the client it was opened on is not");
    }
  }

  /**
   * Builds borrowed clients. It takes the settings a derived client may change (interceptors, tags, no
   * authenticator); the others belong to the user's client and are refused.
   */
  private static final class Builder implements HttpClient.Builder {

    private final DerivedClientBuilder derivedBuilder;
    private final ListPace lists;

    Builder(DerivedClientBuilder derivedBuilder, ListPace lists) {
      this.derivedBuilder = derivedBuilder;
      this.lists = lists;
    }

    @Override
    public HttpClient build() {
      return new BorrowedHttpClient(derivedBuilder.build(), lists);
    }

    @Override
    public HttpClient.Builder addOrReplaceInterceptor(String name, Interceptor interceptor) {
      derivedBuilder.addOrReplaceInterceptor(name, interceptor);
      return this;
    }

    @Override
    public HttpClient.Builder authenticatorNone() {
      derivedBuilder.authenticatorNone();
      return this;
    }

    @Override
    public DerivedClientBuilder tag(Object value) {
      derivedBuilder.tag(value);
      return this;
    }

    @Override
    public HttpClient.Builder connectTimeout(long connectTimeout, TimeUnit unit) {
      throw refused("connectTimeout");
    }

    // Declared by fabric8 8.x, not 7.x: no @Override, so this compiles against both.
    public HttpClient.Builder websocketPingInterval(long interval, TimeUnit unit) {
      throw refused("websocketPingInterval");
    }

    @Override
    public HttpClient.Builder sslContext(KeyManager[] keyManagers, TrustManager[] trustManagers) {
      throw refused("sslContext");
    }

    @Override
    public HttpClient.Builder followAllRedirects() {
      throw refused("followAllRedirects");
    }

    @Override
    public HttpClient.Builder proxyAddress(InetSocketAddress proxyAddress) {
      throw refused("proxyAddress");
    }

    @Override
    public HttpClient.Builder proxyAuthorization(String credentials) {
      throw refused("proxyAuthorization");
    }

    @Override
    public HttpClient.Builder tlsVersions(TlsVersion... tlsVersions) {
      throw refused("tlsVersions");
    }

    @Override
    public HttpClient.Builder tlsServerName(String serverName) {
      throw refused("tlsServerName");
    }

    @Override
    public HttpClient.Builder preferHttp11() {
      throw refused("preferHttp11");
    }

    @Override
    public HttpClient.Builder proxyType(ProxyType type) {
      throw refused("proxyType");
    }

    private static UnsupportedOperationException refused(String setting) {
      return new UnsupportedOperationException(setting + " cannot be set on a gated client: it uses the HTTP "
          + "client of the client it was opened on; set " + setting + " there");
    }
  }
}
