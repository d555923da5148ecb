package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The rules review's derived client ({@code RbacPreflight.rulesClient}, made once per transport), from the
 * adversarial review h-attack5 of commits 1651ccf and ac2c439. Real fabric8 client, embedded Lease API.
 */
class RulesClientTest {

  /**
   * Sound: the rules review and the access reviews go as the user the client authenticates and impersonates (a
   * rules review of another subject would decide the verdict on someone else's rules), and the derived client is
   * usable after the transport closed while the user's client stays open and usable.
   */
  @Test
  void thePreflightsReviewsCarryTheUsersCredentialsAndImpersonationAndCloseLeavesTheUsersClientOpen()
      throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.endsWith("reviews")) {
          seen.add(path.substring(path.lastIndexOf('/') + 1) + " " + request.getHeader("Authorization") + " "
              + request.getHeader("Impersonate-User") + " " + request.getHeader("Impersonate-Group"));
        }
        if (MockApi.isRulesReview(request)) {
          return MockApi.leaseRulesOnly(request);
        }
        return delegate.dispatch(request);
      }
    })) {
      Config config = new ConfigBuilder(Config.empty()).withMasterUrl(server.url()).withNamespace(MockApi.NAMESPACE)
          .withOauthToken("s3cret").withImpersonateUsername("system:serviceaccount:elections:orders")
          .withImpersonateGroups("ops").build();
      try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
          .withHttpClientFactory(new JdkHttpClientFactory()).build()) {
        for (int i = 0; i < 2; i++) {
          Fabric8LeaseTransport transport = new Fabric8LeaseTransport(client, MockApi.NAMESPACE,
              MockApi.fastSettings("a").build(), SharedPools.io());
          CompletableFuture<Optional<LeaseAccessDeniedException>> verdict = new CompletableFuture<>();
          transport.preflight(verdict::complete, verdict::completeExceptionally);
          assertThat(verdict.get(20, TimeUnit.SECONDS)).isEmpty();
          transport.close();
        }
        assertThat(seen).isNotEmpty().allSatisfy(line -> assertThat(line)
            .endsWith(" Bearer s3cret system:serviceaccount:elections:orders ops"));
        assertThat(seen).filteredOn(line -> line.startsWith("selfsubjectrulesreviews")).hasSize(2);
        // The user's client still works after two transports over it closed.
        assertThat(client.leases().inNamespace(MockApi.NAMESPACE).list().getItems()).isNotNull();
      }
    }
  }

  /**
   * Finding 2 (h-attack5), fixed by {@code DerivedClients}, which reads the RequestConfig a client's requests carry
   * (its HTTP client's tag) instead of its Config's. A user may hand the runner a client derived with fabric8's own
   * {@code client.newClient(RequestConfig)}, e.g. to impersonate a service account for the election only. Such a
   * client's requests carry that RequestConfig (its impersonation), but its {@code getConfiguration()} is still the
   * base client's Config: and {@code RbacPreflight.rulesClient} (like {@code Fabric8LeaseTransport}'s Lease and
   * review clients) builds its RequestConfig from {@code userClient.getConfiguration().getRequestConfig()}, so the
   * derived clients drop the user's impersonation: the rules review, the access reviews and the Lease calls run
   * as the base identity, not as the user the given client impersonates (the preflight then judges the wrong
   * subject's rights, and the Lease is written as another user). The same reading makes {@code rulesClient}
   * never recognise a client it made (its Javadoc says one is returned as it is). Here the user's own request
   * carries the impersonation (control), the transport's requests do not.
   */
  @Test
  void aClientDerivedByTheUserToImpersonateKeepsItsImpersonationInTheTransportsRequests() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        seen.add(request.getMethod() + " " + path.substring(path.lastIndexOf('/') + 1) + " "
            + request.getHeader("Impersonate-User"));
        if (MockApi.isRulesReview(request)) {
          return MockApi.leaseRulesOnly(request);
        }
        return delegate.dispatch(request);
      }
    })) {
      try (KubernetesClient base = unimpersonated(server)) {
        KubernetesClient orders = impersonatingOrders(base);
        orders.leases().inNamespace(MockApi.NAMESPACE).withName("control").get();
        assertThat(seen).as("the user's derived client impersonates").containsExactly("GET control orders");
        seen.clear();

        Fabric8LeaseTransport transport = new Fabric8LeaseTransport(orders, MockApi.NAMESPACE,
            MockApi.fastSettings("a").build(), SharedPools.io());
        CompletableFuture<Optional<LeaseAccessDeniedException>> verdict = new CompletableFuture<>();
        transport.preflight(verdict::complete, verdict::completeExceptionally);
        assertThat(verdict.get(20, TimeUnit.SECONDS)).isEmpty();
        CompletableFuture<LeaseStep.Answer> read = new CompletableFuture<>();
        transport.read((answer, failure) -> read.complete(answer));
        read.get(20, TimeUnit.SECONDS);
        transport.close();
        assertThat(seen).isNotEmpty().allSatisfy(line -> assertThat(line).endsWith(" orders"));
      }
    }
  }

  /**
   * {@code rulesClient} returns a client it made as it is (so a transport makes it once, at its start), also when
   * the user's client was derived with {@code newClient}: it reads the request settings the client's requests
   * carry, not its Config's. The client it makes keeps the user's impersonation.
   */
  @Test
  void theRulesClientRecognisesAClientItMadeAndKeepsTheUsersImpersonation() throws Exception {
    try (MockApi server = new MockApi()) {
      try (KubernetesClient base = unimpersonated(server)) {
        KubernetesClient orders = impersonatingOrders(base);
        for (KubernetesClient user : List.of(base, orders)) {
          KubernetesClient quick = RbacPreflight.rulesClient(user);
          assertThat(quick).isNotSameAs(user);
          assertThat(RbacPreflight.rulesClient(quick)).as("a rules client made over %s", user).isSameAs(quick);
          var requests = DerivedClients.requestConfig(quick);
          assertThat(requests.getRequestTimeout()).isEqualTo(RbacPreflight.RULES_REVIEW_TIMEOUT_MILLIS);
          assertThat(requests.getRequestRetryBackoffLimit()).isZero();
          assertThat(requests.getImpersonateUsername())
              .isEqualTo(DerivedClients.requestConfig(user).getImpersonateUsername());
        }
        assertThat(DerivedClients.requestConfig(RbacPreflight.rulesClient(orders)).getImpersonateUsername())
            .isEqualTo("orders");
      }
    }
  }

  /**
   * A transport derives one client at its start, the Lease calls'; the rules review goes through it (no retry, its
   * own 2 s bound on the request), and the access reviews' client is derived only when an access review is sent:
   * never on a start the rules decide (every verb on everything, the fixture's), once when the rules review is
   * refused and the access reviews decide, each of them through it with the user's credentials (issue 16: a
   * derived client is a millisecond of a fresh JVM's start before the first request).
   */
  @Test
  void theAccessReviewsClientIsDerivedOnlyWhenAnAccessReviewIsSent() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean refuseRules = new java.util.concurrent.atomic.AtomicBoolean();
    List<String> reviews = new CopyOnWriteArrayList<>();
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.endsWith("reviews")) {
          reviews.add(path.substring(path.lastIndexOf('/') + 1) + " " + request.getHeader("Authorization"));
        }
        if (refuseRules.get() && MockApi.isRulesReview(request)) {
          return MockApi.rulesReviewRefused();
        }
        return delegate.dispatch(request);
      }
    })) {
      Config config = new ConfigBuilder(Config.empty()).withMasterUrl(server.url()).withNamespace(MockApi.NAMESPACE)
          .withOauthToken("s3cret").build();
      try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
          .withHttpClientFactory(new JdkHttpClientFactory()).build()) {
        for (boolean refused : List.of(false, true)) {
          refuseRules.set(refused);
          reviews.clear();
          Fabric8LeaseTransport transport = new Fabric8LeaseTransport(client, MockApi.NAMESPACE,
              MockApi.fastSettings("a").leadershipEvents(false).build(), SharedPools.io());
          assertThat(transport.reviewClientDerived()).as("at start").isFalse();
          CompletableFuture<Optional<LeaseAccessDeniedException>> verdict = new CompletableFuture<>();
          transport.preflight(verdict::complete, verdict::completeExceptionally);
          assertThat(verdict.get(20, TimeUnit.SECONDS)).isEmpty();
          transport.firstAttemptOver(); // the advice, if any, would be asked now
          if (refused) {
            assertThat(transport.reviewClientDerived()).as("after the access reviews").isTrue();
            assertThat(reviews).contains("selfsubjectrulesreviews Bearer s3cret",
                "selfsubjectaccessreviews Bearer s3cret");
          } else {
            assertThat(transport.reviewClientDerived()).as("after a verdict of the rules").isFalse();
            assertThat(reviews).containsExactly("selfsubjectrulesreviews Bearer s3cret");
          }
          transport.close();
        }
      }
    }
  }

  /**
   * Sound (h-attack16, of the cold start's one derived client): a user's client that retries (fabric8's default
   * retries a 5xx answer) retries none of the preflight's reviews. The rules review, now sent through the Lease
   * calls' client, goes once, and so does each access review through the client derived at the first of them;
   * both still carry the user's impersonation. A server that answers every review 503 gives no verdict: the runner
   * may contend.
   */
  @Test
  void noReviewIsRetriedWhenTheUsersClientRetries() throws Exception {
    List<String> reviews = new CopyOnWriteArrayList<>();
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.endsWith("reviews")) {
          reviews.add(path.substring(path.lastIndexOf('/') + 1) + " " + request.getHeader("Impersonate-User"));
          return new MockResponse().setResponseCode(503).setHeader("Content-Type", "application/json")
              .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":503}");
        }
        return delegate.dispatch(request);
      }
    })) {
      Config config = new ConfigBuilder(Config.empty()).withMasterUrl(server.url()).withNamespace(MockApi.NAMESPACE)
          .withRequestRetryBackoffLimit(4).withRequestRetryBackoffInterval(1).build();
      try (KubernetesClient base = new KubernetesClientBuilder().withConfig(config)
          .withHttpClientFactory(new JdkHttpClientFactory()).build()) {
        KubernetesClient orders = impersonatingOrders(base);
        // Control: the user's own client retries a 503.
        CompletableFuture<io.fabric8.kubernetes.client.http.HttpResponse<String>> control = orders.getHttpClient()
            .sendAsync(orders.getHttpClient().newHttpRequestBuilder()
                .uri(LeaseHttp.apiRoot(orders) + LeaseRules.PATH)
                .post("application/json", LeaseRules.questionJson(MockApi.NAMESPACE)).build(), String.class);
        assertThat(control.get(20, TimeUnit.SECONDS).code()).isEqualTo(503);
        assertThat(reviews).as("the user's client retries").hasSize(5);
        reviews.clear();

        Fabric8LeaseTransport transport = new Fabric8LeaseTransport(orders, MockApi.NAMESPACE,
            MockApi.fastSettings("a").leadershipEvents(false).build(), SharedPools.io());
        CompletableFuture<Optional<LeaseAccessDeniedException>> verdict = new CompletableFuture<>();
        transport.preflight(verdict::complete, verdict::completeExceptionally);
        assertThat(verdict.get(20, TimeUnit.SECONDS)).isEmpty();
        transport.close();
        assertThat(reviews).filteredOn(line -> line.startsWith("selfsubjectrulesreviews")).hasSize(1);
        // The access reviews are sent at once and the first failure decides: at most one per required verb.
        assertThat(reviews).filteredOn(line -> line.startsWith("selfsubjectaccessreviews")).isNotEmpty()
            .hasSizeLessThanOrEqualTo(LeaseNeeds.election().required().size());
        assertThat(reviews).allSatisfy(line -> assertThat(line).endsWith(" orders"));
        assertThat(transport.reviewClientDerived()).isTrue();
      }
    }
  }

  /**
   * FINDING 4 (h-attack5). A close while the rules review is in flight can still send an access review (seen red
   * once in this session: {@code RulesReviewTest.aCloseWhileTheRulesReviewIsInFlightSendsNothingAfterAndReportsNothing}
   * failed with "reviews after the close: [selfsubjectrulesreviews, selfsubjectaccessreviews]", run together with
   * the other tests of this review). The runner's stop cancels the preflight ({@code LifecycleCommands.cancelCalls}:
   * the preflight is {@code over}, its worker interrupted) before it closes the transport ({@code reportStopped}),
   * so in between the preflight's worker sees {@code closing} true and {@code closed} still false: its rules review
   * failed (the interrupt), and {@code RbacPreflight.check} then goes on to the events review, which is bound to
   * {@code closed} only, without looking at {@code closing} first (the branch of the listed rules does look); an
   * events review whose worker starts before the transport closes is sent. Here the window is held open: the
   * preflight turns over when the server gets the rules review (answered 403, as a failed review), the transport
   * is not closed yet, and the I/O executor runs the review at once (its worker started before the preflight's
   * end cancels it, as it can). Nothing but the rules review may be sent.
   */
  @Test
  void aPreflightCancelledDuringTheRulesReviewSendsNoOtherReview() throws Exception {
    List<String> reviews = new CopyOnWriteArrayList<>();
    java.util.concurrent.atomic.AtomicBoolean over = new java.util.concurrent.atomic.AtomicBoolean();
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.endsWith("reviews")) {
          reviews.add(path.substring(path.lastIndexOf('/') + 1));
        }
        if (MockApi.isRulesReview(request)) {
          over.set(true); // the runner's stop cancels the preflight while its rules review is in flight
          return MockApi.rulesReviewRefused();
        }
        return delegate.dispatch(request);
      }
    })) {
      KubernetesClient client = server.client();
      LeaseSettings settings = MockApi.fastSettings("a").build();
      RbacPreflight.check(() -> client, RbacPreflight.rulesClient(client), MockApi.NAMESPACE, settings,
          LeaseNeeds.election(), over::get, () -> false, Runnable::run,
          new EventAccess(MockApi.NAMESPACE, settings.leaseName()), later -> { }, verb -> { });
      assertThat(reviews).containsExactly("selfsubjectrulesreviews");
    }
  }

  private static KubernetesClient unimpersonated(MockApi server) {
    return new KubernetesClientBuilder().withConfig(new ConfigBuilder(Config.empty()).withMasterUrl(server.url())
        .withNamespace(MockApi.NAMESPACE).build()).withHttpClientFactory(new JdkHttpClientFactory()).build();
  }

  /** {@code base} impersonating "orders" by fabric8's {@code newClient}: its Config stays {@code base}'s. */
  private static KubernetesClient impersonatingOrders(KubernetesClient base) {
    return base.newClient(new io.fabric8.kubernetes.client.RequestConfigBuilder(
            base.getConfiguration().getRequestConfig()).withImpersonateUsername("orders").build())
        .adapt(KubernetesClient.class);
  }
}
