package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A client from {@link WriteGate#gate} sends writes only while its term is valid, against a real fabric8 client
 * over HTTP and the mock API server, whose own request log is the judge of what was sent.
 */
class WriteGateTest {

  private static final String CONFIGMAPS = "/api/v1/namespaces/" + MockApi.NAMESPACE + "/configmaps";
  private static final Duration WAIT = Duration.ofSeconds(10);

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final KubernetesClient client = api.client();
  private final AtomicLong sentinels = new AtomicLong();

  @Test
  void writesReachTheServerWhileTheTermIsValid() throws Exception {
    LeadershipTerm term = termValidForAnHour();
    try (KubernetesClient gated = WriteGate.gate(client, term)) {
      ConfigMap created = gated.configMaps().resource(configMap("orders", "1")).create();
      ConfigMap updated = gated.configMaps().resource(
          new ConfigMapBuilder(created).addToData("count", "2").build()).update();
      gated.configMaps().withName("orders").patch(PatchContext.of(PatchType.JSON_MERGE),
          "{\"data\":{\"count\":\"3\"}}");
      assertThat(client.configMaps().withName("orders").get().getData()).containsEntry("count", "3");
      gated.configMaps().withName("orders").delete();

      assertThat(updated.getData()).containsEntry("count", "2");
      assertThat(client.configMaps().withName("orders").get()).isNull();
      assertThat(configMapWritesTheServerReceived()).containsExactly(
          "POST " + CONFIGMAPS, "PUT " + CONFIGMAPS + "/orders", "PATCH " + CONFIGMAPS + "/orders",
          "DELETE " + CONFIGMAPS + "/orders");
    }
  }

  @Test
  void afterTheTermEndedNoWriteReachesTheServerWhileReadsStillDo() throws Exception {
    LeadershipTerm term = termValidForAnHour();
    ConfigMap existing = client.configMaps().resource(configMap("orders", "1")).create();
    try (KubernetesClient gated = WriteGate.gate(client, term)) {
      configMapWritesTheServerReceived();

      term.end();

      assertRefused(() -> gated.configMaps().resource(configMap("other", "1")).create(), "POST", CONFIGMAPS);
      assertRefused(() -> gated.configMaps().resource(
          new ConfigMapBuilder(existing).addToData("count", "2").build()).update(), "PUT", CONFIGMAPS + "/orders");
      assertRefused(() -> gated.configMaps().withName("orders").patch(PatchContext.of(PatchType.JSON_MERGE),
          "{\"data\":{\"count\":\"3\"}}"), "PATCH", CONFIGMAPS + "/orders");
      assertRefused(() -> gated.configMaps().withName("orders").delete(), "DELETE", CONFIGMAPS + "/orders");
      assertThat(configMapWritesTheServerReceived()).isEmpty();

      assertThat(gated.configMaps().withName("orders").get().getData()).containsEntry("count", "1");
      assertThat(gated.configMaps().list().getItems()).extracting(c -> c.getMetadata().getName())
          .containsExactly("orders");
    }
  }

  @Test
  void theRefusalNamesTheMethodThePathAndTheTerm() {
    LeadershipTerm term = termValidForAnHour();
    term.end();
    try (KubernetesClient gated = WriteGate.gate(client, term)) {
      ConfigMap read = new ConfigMapBuilder(configMap("orders", "1"))
          .editMetadata().withResourceVersion("7").endMetadata().build();
      TermEndedException refused = catchThrowableOfType(TermEndedException.class,
          () -> gated.configMaps().resource(read).update());

      assertThat(refused).hasMessageStartingWith("refused PUT " + CONFIGMAPS + "/orders: the leadership term "
          + "(holder=a, leaseTransitions=3) is no longer valid");
      assertThat(refused).hasMessageContaining("the request was not sent");
      assertThat(refused).isInstanceOf(KubernetesClientException.class);
      // Thrown by the gate on this thread, from inside the call: not a copy rethrown from another thread.
      assertThat(refused).hasNoCause();
      assertThat(refused.method()).isEqualTo("PUT");
      assertThat(refused.path()).isEqualTo(CONFIGMAPS + "/orders");
      assertThat(refused.holderIdentity()).isEqualTo("a");
      assertThat(refused.leaseTransitions()).isEqualTo(3);
      assertThat(refused.isElected()).isTrue();
    }
  }

  @Test
  void aTermThatLapsedAtItsDeadlineIsRefusedWithoutAnyoneEndingIt() throws Exception {
    // The renew deadline on the monotonic clock: as a process paused past its deadline finds on resuming.
    AtomicLong now = new AtomicLong(1_000);
    LeadershipTerm term = LeadershipTerm.elected("a", 3, Instant.EPOCH, "42", now::get, 2_000);
    try (KubernetesClient gated = WriteGate.gate(client, term)) {
      gated.configMaps().resource(configMap("orders", "1")).create();
      configMapWritesTheServerReceived();

      now.set(2_000);

      assertRefused(() -> gated.configMaps().withName("orders").delete(), "DELETE", CONFIGMAPS + "/orders");
      assertThat(configMapWritesTheServerReceived()).isEmpty();
      assertThat(client.configMaps().withName("orders").get()).isNotNull();
    }
  }

  @Test
  void theGatedClientNeverRetriesSoNoRetryOutlivesTheTerm() throws Exception {
    // The user's client would retry a write that got a 5xx three times. The server ends the term while it
    // answers the first attempt: through the gate that attempt is the only one, its failure reaches the caller
    // at once, and the next write is refused before it is sent.
    LeadershipTerm term = termValidForAnHour();
    ConfigMap existing = client.configMaps().resource(configMap("orders", "1")).create();
    api.server.expect().put().withPath(CONFIGMAPS + "/orders").andReply(503, request -> {
      term.end();
      return new StatusBuilder().withCode(503).withMessage("try again").build();
    }).once();
    try (KubernetesClient retrying = clientWith(new ConfigBuilder(Config.empty())
            .withMasterUrl(api.url()).withNamespace(MockApi.NAMESPACE)
            .withRequestRetryBackoffLimit(3).withRequestRetryBackoffInterval(50).build());
        KubernetesClient gated = WriteGate.gate(retrying, term)) {
      configMapWritesTheServerReceived();
      ConfigMap changed = new ConfigMapBuilder(existing).addToData("count", "2").build();

      assertThatThrownBy(() -> gated.configMaps().resource(changed).update())
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(503))
          .isNotInstanceOf(TermEndedException.class);
      assertRefused(() -> gated.configMaps().resource(changed).update(), "PUT", CONFIGMAPS + "/orders");

      assertThat(configMapWritesTheServerReceived()).containsExactly("PUT " + CONFIGMAPS + "/orders");
      assertThat(client.configMaps().withName("orders").get().getData()).containsEntry("count", "1");
      assertThat(retrying.getConfiguration().getRequestRetryBackoffLimit()).as("the user's client is unchanged")
          .isEqualTo(3);
    }
  }

  @Test
  void aGateWithACheckOfItsOwnAsksItOnTheCallingThreadBeforeEachWriteAndSendsNothingItRefuses() throws Exception {
    // The user's client would retry a 5xx: through the gate the one attempt is sent, and checked, on the caller's
    // thread, so a check that reads the thread's state (as the sharded JOSDK operator's does) sees the caller's.
    ConfigMap existing = client.configMaps().resource(configMap("orders", "1")).create();
    api.server.expect().put().withPath(CONFIGMAPS + "/orders").andReply(503, request ->
        new StatusBuilder().withCode(503).withMessage("try again").build()).once();
    List<String> asked = new CopyOnWriteArrayList<>();
    ThreadLocal<Boolean> refusing = ThreadLocal.withInitial(() -> false);
    WriteGate.Check check = (method, path) -> {
      asked.add(method + " " + path + " on " + Thread.currentThread().getName());
      if (refusing.get()) {
        throw new KubernetesClientException("refused " + method + " " + path);
      }
    };
    try (KubernetesClient retrying = clientWith(new ConfigBuilder(Config.empty())
            .withMasterUrl(api.url()).withNamespace(MockApi.NAMESPACE)
            .withRequestRetryBackoffLimit(3).withRequestRetryBackoffInterval(50).build());
        KubernetesClient gated = WriteGate.gate(retrying, check)) {
      configMapWritesTheServerReceived();
      ConfigMap changed = new ConfigMapBuilder(existing).addToData("count", "2").build();
      String caller = Thread.currentThread().getName();

      assertThatThrownBy(() -> gated.configMaps().resource(changed).update())
          .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(503));
      assertThat(gated.configMaps().withName("orders").get().getData()).containsEntry("count", "1");
      refusing.set(true);
      assertThatThrownBy(() -> gated.configMaps().resource(changed).update())
          .isInstanceOf(KubernetesClientException.class).hasMessageContaining("refused PUT " + CONFIGMAPS + "/orders");

      assertThat(asked).containsExactly("PUT " + CONFIGMAPS + "/orders on " + caller,
          "PUT " + CONFIGMAPS + "/orders on " + caller);
      assertThat(configMapWritesTheServerReceived()).containsExactly("PUT " + CONFIGMAPS + "/orders");
    }
  }

  @Test
  void aWatchThroughTheGateDeliversEventsAfterTheTermEnded() throws Exception {
    LeadershipTerm term = termValidForAnHour();
    term.end();
    CountDownLatch added = new CountDownLatch(1);
    try (KubernetesClient gated = WriteGate.gate(client, term);
        Watch watch = gated.configMaps().withName("orders").watch(new Watcher<ConfigMap>() {
          @Override
          public void eventReceived(Action action, ConfigMap resource) {
            if (action == Action.ADDED) {
              added.countDown();
            }
          }

          @Override
          public void onClose(WatcherException cause) {}
        })) {
      client.configMaps().resource(configMap("orders", "1")).create();

      assertThat(added.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("ADDED delivered").isTrue();
    }
  }

  @Test
  void aLeaderThatClosesItsRunnerCanNoLongerWriteThroughItsGate() throws Exception {
    GatingReconciler reconciler = new GatingReconciler(client);
    try (ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(reconciler)
        .start()) {
      KubernetesClient gated = reconciler.awaitFirstGate();
      gated.configMaps().resource(configMap("orders", "1")).create();
      configMapWritesTheServerReceived();

      runner.close();

      assertRefused(() -> gated.configMaps().withName("orders").delete(), "DELETE", CONFIGMAPS + "/orders");
      assertThat(configMapWritesTheServerReceived()).isEmpty();
      assertThat(gated.configMaps().withName("orders").get()).isNotNull();
    } finally {
      reconciler.closeGates();
    }
  }

  @Test
  void aLeaderWhoseLeaseAnotherHolderTookCanNoLongerWriteThroughItsGateEvenWhenItLeadsAgain()
      throws Exception {
    GatingReconciler reconciler = new GatingReconciler(client);
    try (ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())   // RECONTEND after the loss
        .service(reconciler)
        .start()) {
      KubernetesClient gated = reconciler.awaitFirstGate();
      LeadershipTerm first = reconciler.terms.get(0);
      gated.configMaps().resource(configMap("orders", "1")).create();

      takeLeaseAs("intruder");
      assertThat(first.awaitEnd(WAIT)).as("the first term ends at the leader's next renewal").isTrue();
      // The intruder never renews: the runner leads again, with a new term, once its lease has expired.
      assertThat(Replica.awaitTrue(() -> reconciler.terms.size() == 2 && runner.currentTerm().isPresent(), WAIT))
          .as("leads again").isTrue();
      configMapWritesTheServerReceived();

      TermEndedException refused = assertRefused(
          () -> gated.configMaps().withName("orders").delete(), "DELETE", CONFIGMAPS + "/orders");
      assertThat(refused.leaseTransitions()).isEqualTo(first.leaseTransitions());
      assertThat(configMapWritesTheServerReceived()).isEmpty();
      try (KubernetesClient current = WriteGate.gate(client, runner.currentTerm().orElseThrow())) {
        current.configMaps().withName("orders").delete();
      }
      assertThat(configMapWritesTheServerReceived()).containsExactly("DELETE " + CONFIGMAPS + "/orders");
    } finally {
      reconciler.closeGates();
    }
  }

  @Test
  void anUnelectedTermLetsWritesThroughUntilTheRunnerCloses() throws Exception {
    GatingReconciler reconciler = new GatingReconciler(client);
    try (ElectionRunner runner = ElectionRunner.builder()
        .decision(MockApi.RUN_UNELECTED)
        .settings(MockApi.fastSettings("solo").build())
        .service(reconciler)
        .start()) {
      KubernetesClient gated = reconciler.awaitFirstGate();
      gated.configMaps().resource(configMap("orders", "1")).create();
      assertThat(configMapWritesTheServerReceived()).containsExactly("POST " + CONFIGMAPS);

      runner.close();

      TermEndedException refused = assertRefused(
          () -> gated.configMaps().withName("orders").delete(), "DELETE", CONFIGMAPS + "/orders");
      assertThat(refused).hasMessageContaining("the unelected term of solo ended when its runner closed");
      assertThat(refused.isElected()).isFalse();
      assertThat(configMapWritesTheServerReceived()).isEmpty();
    } finally {
      reconciler.closeGates();
    }
  }

  @Test
  void closingTheGatedClientLeavesTheUsersClientUsable() throws Exception {
    KubernetesClient gated = WriteGate.gate(client, termValidForAnHour());
    gated.configMaps().resource(configMap("orders", "1")).create();

    gated.close();

    assertThat(client.getHttpClient().isClosed()).isFalse();
    client.configMaps().resource(configMap("other", "1")).create();
    assertThat(client.configMaps().list().getItems()).hasSize(2);
    assertThatThrownBy(() -> gated.configMaps().withName("orders").get())
        .hasMessageContaining("gated client was closed");
  }

  @Test
  void theGatedClientSendsWithTheUsersConfiguration() throws Exception {
    String user = "system:serviceaccount:shop:orders-controller";
    try (KubernetesClient impersonating = clientWith(new ConfigBuilder(Config.empty())
            .withMasterUrl(api.url()).withNamespace(MockApi.NAMESPACE).withImpersonateUsername(user).build());
        KubernetesClient gated = WriteGate.gate(impersonating, termValidForAnHour())) {
      assertThat(gated.getNamespace()).isEqualTo(MockApi.NAMESPACE);
      assertThat(gated.getMasterUrl()).isEqualTo(impersonating.getMasterUrl());
      drainUntilSentinel();

      gated.configMaps().resource(configMap("orders", "1")).create();
      gated.configMaps().withName("orders").get();

      List<RecordedRequest> sent = drainUntilSentinel().stream()
          .filter(r -> r.getPath().startsWith(CONFIGMAPS + "/orders") || r.getPath().equals(CONFIGMAPS))
          .toList();
      assertThat(sent).hasSize(2)
          .allSatisfy(r -> assertThat(r.getHeader("Impersonate-User")).isEqualTo(user));
    }
  }

  /**
   * A client the user derived with fabric8's {@code newClient(RequestConfig)} to impersonate someone keeps its
   * Config (the base client's, without the impersonation): the gate still writes as the user that client
   * impersonates, and so does a gate opened on that gate.
   */
  @Test
  void aClientTheUserDerivedToImpersonateWritesThroughItsGateAsThatUser() throws Exception {
    KubernetesClient orders = client.newClient(new RequestConfigBuilder(client.getConfiguration().getRequestConfig())
        .withImpersonateUsername("orders").build()).adapt(KubernetesClient.class);
    drainUntilSentinel();
    try (KubernetesClient gated = WriteGate.gate(orders, termValidForAnHour());
        KubernetesClient gatedTwice = WriteGate.gate(gated, termValidForAnHour())) {
      orders.configMaps().resource(configMap("control", "1")).create();
      gated.configMaps().resource(configMap("orders", "1")).create();
      gatedTwice.configMaps().resource(configMap("orders-again", "1")).create();

      List<String> writes = drainUntilSentinel().stream()
          .filter(r -> "POST".equals(r.getMethod()) && r.getPath().startsWith(CONFIGMAPS))
          .map(r -> r.getHeader("Impersonate-User"))
          .toList();
      assertThat(writes).containsExactly("orders", "orders", "orders");
    }
  }

  // --- fixtures ---

  private static LeadershipTerm termValidForAnHour() {
    return LeadershipTerm.elected("a", 3, Instant.EPOCH, "42", System::nanoTime,
        System.nanoTime() + Duration.ofHours(1).toNanos());
  }

  private static ConfigMap configMap(String name, String count) {
    return new ConfigMapBuilder().withNewMetadata().withName(name).endMetadata()
        .withData(Map.of("count", count)).build();
  }

  private KubernetesClient clientWith(Config config) {
    return new KubernetesClientBuilder().withConfig(config).withHttpClientFactory(new JdkHttpClientFactory())
        .build();
  }

  private static TermEndedException assertRefused(ThrowingCallable call, String method, String path) {
    TermEndedException refused = catchThrowableOfType(TermEndedException.class, call);
    assertThat(refused).as("%s %s refused", method, path).isNotNull();
    assertThat(refused.method()).isEqualTo(method);
    assertThat(refused.path()).isEqualTo(path);
    assertThat(refused).hasMessageStartingWith("refused " + method + " " + path + ": ");
    return refused;
  }

  /**
   * The ConfigMap writes the server received since the last look, as "METHOD path" in order of arrival. It takes
   * the server's requests up to a sentinel read sent after everything before it has completed, so nothing the
   * test sent earlier can still be on its way.
   */
  private List<String> configMapWritesTheServerReceived() throws InterruptedException {
    List<String> writes = new ArrayList<>();
    for (RecordedRequest request : drainUntilSentinel()) {
      String path = request.getPath().replaceFirst("\\?.*", "");
      if (path.startsWith(CONFIGMAPS) && !"GET".equals(request.getMethod())) {
        writes.add(request.getMethod() + " " + path);
      }
    }
    return writes;
  }

  private List<RecordedRequest> drainUntilSentinel() throws InterruptedException {
    String sentinel = "sentinel-" + sentinels.incrementAndGet();
    client.configMaps().withName(sentinel).get();
    List<RecordedRequest> received = new ArrayList<>();
    while (true) {
      RecordedRequest request = api.server.takeRequest(WAIT.toMillis(), TimeUnit.MILLISECONDS);
      assertThat(request).as("the server received the sentinel read").isNotNull();
      if (request.getPath().endsWith("/configmaps/" + sentinel)) {
        return received;
      }
      received.add(request);
    }
  }

  /** Writes another holder into the Lease, re-reading after each conflict with the leader's renewals. */
  private void takeLeaseAs(String holder) {
    while (true) {
      try {
        client.leases().inNamespace(MockApi.NAMESPACE).resource(new LeaseBuilder(api.lease())
            .editSpec().withHolderIdentity(holder).endSpec().build()).update();
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
      }
    }
  }

  /** A reconciler as the WriteGate Javadoc shows it: each term gets a gated client of its own. */
  private static final class GatingReconciler implements LeaderService {
    final List<LeadershipTerm> terms = new CopyOnWriteArrayList<>();
    private final List<KubernetesClient> gates = new CopyOnWriteArrayList<>();
    private final KubernetesClient client;
    private final CountDownLatch started = new CountDownLatch(1);
    private final AtomicReference<KubernetesClient> first = new AtomicReference<>();

    GatingReconciler(KubernetesClient client) {
      this.client = client;
    }

    @Override
    public void start(LeadershipTerm term) {
      KubernetesClient gated = WriteGate.gate(client, term);
      terms.add(term);
      gates.add(gated);
      first.compareAndSet(null, gated);
      started.countDown();
    }

    @Override
    public void stop() {}

    KubernetesClient awaitFirstGate() throws InterruptedException {
      assertThat(started.await(WAIT.toMillis(), TimeUnit.MILLISECONDS)).as("reconciler started").isTrue();
      return first.get();
    }

    void closeGates() {
      gates.forEach(KubernetesClient::close);
    }
  }
}
