package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The real transport over HTTP: its asynchronous requests are answered at most once, with HTTP errors mapped as
 * fabric8's resource API maps them, and cancelled, closed, timed out and bounded without a thread waiting; they
 * carry the user's credentials and impersonation and keep what a user put on the Lease. Also its bookkeeping: a
 * call cancelled before it was sent is not held in flight (from the adversarial review of the runner's rewrite
 * onto RunnerLifecycle, commit 0201dfc).
 */
class Fabric8LeaseTransportTest {

  private static final String LEASES = "/apis/coordination.k8s.io/v1/namespaces/" + MockApi.NAMESPACE + "/leases";
  private static final Duration PATIENCE = Duration.ofSeconds(20);

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();

  /** Every answer a call got, in order: a call is answered at most once. */
  private static final class Answers implements LeaseTransport.Answered {
    final List<LeaseStep.Answer> answers = new CopyOnWriteArrayList<>();
    final List<Throwable> failures = new CopyOnWriteArrayList<>();
    final CompletableFuture<LeaseStep.Answer> first = new CompletableFuture<>();

    @Override
    public void answered(LeaseStep.Answer answer, Throwable failure) {
      answers.add(answer);
      if (failure != null) {
        failures.add(failure);
      }
      first.complete(answer);
    }

    LeaseStep.Answer await() throws Exception {
      return first.get(PATIENCE.toSeconds(), TimeUnit.SECONDS);
    }
  }

  /** A server whose Lease requests matching {@code method} get {@code answer} instead of the fixture's. */
  private static MockApi answering(String method, AtomicInteger received,
      java.util.function.Supplier<MockResponse> answer) {
    return new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.startsWith(LEASES) && method.equals(request.getMethod()) && !path.contains("watch=true")) {
          received.incrementAndGet();
          MockResponse response = answer.get();
          if (response != null) {
            return response;
          }
        }
        return delegate.dispatch(request);
      }
    });
  }

  private static MockResponse status(int code, String reason, String message) {
    return new MockResponse().setResponseCode(code).setHeader("Content-Type", "application/json")
        .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
            + "\"message\":\"" + message + "\",\"reason\":\"" + reason + "\",\"code\":" + code + "}");
  }

  private static LeaseRecord record(String holder, String resourceVersion) {
    Instant now = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MICROS);
    return new LeaseRecord(holder, 2, now, now, 0, resourceVersion);
  }

  /**
   * Settings whose request timeout (10 s, half the renew deadline) a request to the mock server meets however loaded
   * the machine: the fast settings' 750 ms is not always enough on a loaded 2-core machine for a new connection and
   * its answer, and a call that times out is answered {@code timed out} before the answer or the cancel, close or
   * further request that a test waits for (seen at a load average of 15: a read answered {@code timed out} instead
   * of {@code Missing}, and on a cold JVM two of three reads answered {@code timed out} before the close).
   */
  private static final LeaseSettings PATIENT_SETTINGS = MockApi.fastSettings("a").leaseDuration(Duration.ofSeconds(30))
      .renewDeadline(Duration.ofSeconds(20)).retryPeriod(Duration.ofSeconds(2)).build();

  /** A transport to {@code server} with {@link #PATIENT_SETTINGS}: its calls end by their answer, not by timing out. */
  private static Fabric8LeaseTransport transport(MockApi server, SharedPools.InFlight requests) {
    return transport(server, requests, PATIENT_SETTINGS);
  }

  private static Fabric8LeaseTransport transport(MockApi server, SharedPools.InFlight requests,
      LeaseSettings settings) {
    return new Fabric8LeaseTransport(server.client(), MockApi.NAMESPACE, settings, SharedPools.io(),
        SharedPools.handOver(), requests, new SharedPools.InFlight(16, "leadership Event writes"));
  }

  @Test
  void aConflictIsMappedToItsCodeWithTheServersMessage() throws Exception {
    AtomicInteger puts = new AtomicInteger();
    SharedPools.InFlight requests = new SharedPools.InFlight(64, "Lease requests");
    try (MockApi server = answering("PUT", puts, () -> status(409, "Conflict",
        "Operation cannot be fulfilled on leases.coordination.k8s.io: the object has been modified"));
        Fabric8LeaseTransport transport = transport(server, requests)) {
      Answers update = new Answers();
      transport.update(record("a", "7"), update);

      assertThat(update.await()).isEqualTo(new LeaseStep.Answer.Failed(LeaseStep.FailureKind.CONFLICT,
          ((LeaseCallFailed) update.failures.get(0)).getMessage()));
      LeaseCallFailed failed = (LeaseCallFailed) update.failures.get(0);
      assertThat(failed.code()).isEqualTo(409);
      assertThat(failed.getMessage())
          .startsWith("update Lease failed: HTTP 409 (conflict): Failure executing: PUT at: ")
          .contains(LEASES + "/" + MockApi.LEASE).contains("the object has been modified");
      assertThat(failed.getCause()).isInstanceOf(KubernetesClientException.class);
      assertThat(requests.inFlight()).isZero();
    }
  }

  @Test
  void aWriteToAMissingLeaseIsNotFoundAndAReadOfOneIsMissing() throws Exception {
    AtomicInteger requests = new AtomicInteger();
    try (MockApi server = answering("PUT", requests, () -> status(404, "NotFound",
        "leases.coordination.k8s.io \\\"orders-controller\\\" not found"));
        Fabric8LeaseTransport transport = transport(server, new SharedPools.InFlight(64, "Lease requests"))) {
      Answers update = new Answers();
      transport.update(record("a", "7"), update);
      Answers read = new Answers();
      transport.read(read);

      assertThat(update.await()).isInstanceOfSatisfying(LeaseStep.Answer.Failed.class,
          failed -> assertThat(failed.kind()).isEqualTo(LeaseStep.FailureKind.NOT_FOUND));
      assertThat(update.failures.get(0)).hasMessageContaining("HTTP 404 (not found)")
          .hasMessageContaining("not found");
      assertThat(read.await()).isEqualTo(new LeaseStep.Answer.Missing());
    }
  }

  @Test
  void aServerErrorFailsTheCallOnceAndIsNotRetried() throws Exception {
    AtomicInteger gets = new AtomicInteger();
    try (MockApi server = answering("GET", gets, () -> status(500, "InternalError", "etcdserver: leader changed"));
        Fabric8LeaseTransport transport = transport(server, new SharedPools.InFlight(64, "Lease requests"))) {
      Answers read = new Answers();
      transport.read(read);

      assertThat(read.await()).isInstanceOfSatisfying(LeaseStep.Answer.Failed.class,
          failed -> assertThat(failed.kind()).isEqualTo(LeaseStep.FailureKind.OTHER));
      assertThat(((LeaseCallFailed) read.failures.get(0)).code()).isEqualTo(500);
      assertThat(read.failures.get(0)).hasMessageContaining("HTTP 500 (server error)")
          .hasMessageContaining("etcdserver: leader changed");
      // A second read, answered after it, shows the server got nothing more of the first: no retry was sent.
      Answers again = new Answers();
      transport.read(again);
      again.await();
      assertThat(gets.get()).as("GETs the server received").isEqualTo(2);
      assertThat(read.answers).hasSize(1);
    }
  }

  @Test
  void aCallCancelledBeforeItsAnswerIsNeverAnsweredAndGivesItsPlaceBack() throws Exception {
    AtomicInteger gets = new AtomicInteger();
    SharedPools.InFlight requests = new SharedPools.InFlight(64, "Lease requests");
    try (MockApi server = answering("GET", gets, () -> gets.get() == 1
        ? status(404, "NotFound", "not found").setBodyDelay(Duration.ofMillis(500)) : null);
        Fabric8LeaseTransport transport = transport(server, requests)) {
      Answers cancelled = new Answers();
      LeaseTransport.Call call = transport.read(cancelled);
      assertThat(Await.holds(() -> gets.get() == 1, PATIENCE)).as("the request reached the server").isTrue();

      call.cancel();
      // Its exchange goes on (fabric8 aborts none) until its answer comes: so does its place (FINDING 2 of h-attack3).
      assertThat(Await.holds(() -> requests.inFlight() == 0, PATIENCE)).as("its place given back").isTrue();
      Answers later = new Answers();
      transport.read(later);
      later.await();
      // Its response came (the server delayed it less than the later read took to be sent and answered, or not):
      // either way the cancelled call stays unanswered.
      call.cancel();
      assertThat(cancelled.answers).isEmpty();
      assertThat(requests.inFlight()).isZero();
    }
  }

  @Test
  void aCancelAfterTheAnswerChangesNothing() throws Exception {
    SharedPools.InFlight requests = new SharedPools.InFlight(64, "Lease requests");
    try (Fabric8LeaseTransport transport = transport(api, requests)) {
      Answers read = new Answers();
      LeaseTransport.Call call = transport.read(read);
      assertThat(read.await()).isEqualTo(new LeaseStep.Answer.Missing());

      call.cancel();
      call.cancel();
      assertThat(read.answers).hasSize(1);
      assertThat(requests.inFlight()).isZero();
    }
  }

  @Test
  void closeEndsEveryCallInFlightUnansweredAndRefusesTheNext() throws Exception {
    AtomicInteger gets = new AtomicInteger();
    SharedPools.InFlight requests = new SharedPools.InFlight(64, "Lease requests");
    try (MockApi server = answering("GET", gets,
        () -> status(404, "NotFound", "not found").setBodyDelay(Duration.ofSeconds(60)))) {
      Fabric8LeaseTransport transport = transport(server, requests);
      List<Answers> calls = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        Answers answers = new Answers();
        transport.read(answers);
        calls.add(answers);
      }
      // With PATIENT_SETTINGS' 10 s request timeout, not the fast 750 ms: none of the three times out (and is
      // answered) before it reached the server and the close came, however loaded the machine.
      assertThat(Await.holds(() -> gets.get() == 3, PATIENCE)).as("the requests reached the server").isTrue();

      transport.close();
      // Their exchanges go on at the server (fabric8 aborts none) until their request timeout: so do their places.
      assertThat(Await.holds(() -> requests.inFlight() == 0, PATIENCE.plus(transport.requestTimeout())))
          .as("places given back at last").isTrue();
      assertThat(calls).allSatisfy(answers -> assertThat(answers.answers).isEmpty());
      Answers after = new Answers();
      transport.read(after);
      assertThat(after.first).as("refused at once, on the caller's thread").isDone();
      assertThat(after.failures.get(0)).hasMessage("get Lease refused: the election is closing");
    }
  }

  /**
   * FINDING 2 (h-attack3). A cancelled request gave its place in the JVM's bound back at once, but fabric8's
   * {@code sendAsync} does not abort the exchange when its future is cancelled: the request stays at the server
   * until its answer or its request timeout. Runners whose calls are cut short (a renewal at its renew deadline,
   * a close, a restart) so had more than the bound's requests at the API server at once, any number within one
   * request timeout. A place is now given back when the exchange ends, so the next call past the bound is refused.
   */
  @Test
  void aCancelledRequestHoldsItsPlaceUntilItsExchangeEnds() throws Exception {
    AtomicInteger gets = new AtomicInteger();
    SharedPools.InFlight requests = new SharedPools.InFlight(4, "Lease requests");
    try (MockApi server = answering("GET", gets,
        () -> status(404, "NotFound", "not found").setBodyDelay(Duration.ofSeconds(60)));
        Fabric8LeaseTransport transport = new Fabric8LeaseTransport(server.client(), MockApi.NAMESPACE,
            LeaseSettings.builder().leaseName(MockApi.LEASE).namespace(MockApi.NAMESPACE).identity("a")
                .leaseDuration(Duration.ofSeconds(160)).renewDeadline(Duration.ofSeconds(120))
                .retryPeriod(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(60)).build(),
            SharedPools.io(), SharedPools.handOver(), requests, new SharedPools.InFlight(16, "Event writes"))) {
      List<Answers> refused = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        Answers answers = new Answers();
        LeaseTransport.Call call = transport.read(answers);
        if (answers.first.isDone()) {
          refused.add(answers);
          continue;
        }
        int sent = i + 1 - refused.size();
        assertThat(Await.holds(() -> gets.get() == sent, PATIENCE)).as("request %s reached the server", sent)
            .isTrue();
        call.cancel();
      }
      assertThat(gets.get()).as("requests at the server at once (none answered yet)").isEqualTo(4);
      assertThat(refused).hasSize(6).allSatisfy(answers -> assertThat(answers.failures.get(0))
          .hasMessageContaining("refused: 4 Lease requests are in flight"));
      assertThat(requests.inFlight()).isEqualTo(4);
    }
  }

  /**
   * A request cancelled while still inside the HTTP client's {@code sendAsync} (here held in an interceptor, as
   * fabric8 7's clients may hold it after the request reached the server) gave its place back at once; when
   * {@code sendAsync} then went on, the server had one request more than the bound at once (seen as a flaky
   * {@link #aCancelledRequestHoldsItsPlaceUntilItsExchangeEnds} on fabric8 7: 5 requests of a bound of 4). It now
   * keeps its place until its exchange is over, or a request timeout after its cancel if {@code sendAsync} has not
   * returned by then.
   */
  @Test
  void aRequestCancelledInsideSendAsyncKeepsItsPlaceSoTheServerNeverSeesMoreThanTheBound() throws Exception {
    AtomicInteger gets = new AtomicInteger();
    AtomicInteger inInterceptor = new AtomicInteger();
    CountDownLatch release = new CountDownLatch(1);
    io.fabric8.kubernetes.client.http.Interceptor holdsTheFirst = new io.fabric8.kubernetes.client.http.Interceptor() {
      @Override
      public void before(io.fabric8.kubernetes.client.http.BasicBuilder builder,
          io.fabric8.kubernetes.client.http.HttpRequest request, RequestTags tags) {
        if (inInterceptor.incrementAndGet() == 1) {
          try {
            release.await(); // the first request's sendAsync does not return until the test lets it
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
    };
    SharedPools.InFlight requests = new SharedPools.InFlight(4, "Lease requests");
    try (MockApi server = answering("GET", gets,
        () -> status(404, "NotFound", "not found").setBodyDelay(Duration.ofSeconds(60)))) {
      Config config = new ConfigBuilder(Config.empty()).withMasterUrl(server.url())
          .withNamespace(MockApi.NAMESPACE).build();
      try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
              .withHttpClientFactory(new JdkHttpClientFactory())
              .withHttpClientBuilderConsumer(builder -> builder.addOrReplaceInterceptor("holds", holdsTheFirst))
              .build();
          Fabric8LeaseTransport transport = new Fabric8LeaseTransport(client, MockApi.NAMESPACE,
              LeaseSettings.builder().leaseName(MockApi.LEASE).namespace(MockApi.NAMESPACE).identity("a")
                  .leaseDuration(Duration.ofSeconds(160)).renewDeadline(Duration.ofSeconds(120))
                  .retryPeriod(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(60)).build(),
              SharedPools.io(), SharedPools.handOver(), requests, new SharedPools.InFlight(16, "Event writes"))) {
        Answers held = new Answers();
        LeaseTransport.Call first = transport.read(held);
        assertThat(Await.holds(() -> inInterceptor.get() == 1, PATIENCE)).as("the first is in sendAsync").isTrue();
        first.cancel();
        List<Answers> later = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
          Answers answers = new Answers();
          transport.read(answers);
          later.add(answers);
        }
        assertThat(Await.holds(() -> gets.get() >= 3, PATIENCE)).as("three more reached the server").isTrue();
        release.countDown();
        assertThat(Await.holds(() -> gets.get() >= 4, PATIENCE)).as("the first went out after all").isTrue();

        assertThat(later.get(3).first).as("the fifth refused: the cancelled first still holds its place").isDone();
        assertThat(later.get(3).failures.get(0)).hasMessageContaining("refused: 4 Lease requests are in flight");
        assertThat(held.answers).as("the cancelled call is never answered").isEmpty();
        assertThat(gets.get()).as("requests at the server at once (none answered yet)").isEqualTo(4);
        assertThat(requests.inFlight()).isEqualTo(4);
      }
    }
  }

  @Test
  void aServerThatNeverAnswersFailsTheCallAtItsRequestTimeout() throws Exception {
    AtomicInteger gets = new AtomicInteger();
    SharedPools.InFlight requests = new SharedPools.InFlight(64, "Lease requests");
    // The fast settings' 750 ms request timeout: the call times out whether or not it reached the server by then.
    try (MockApi server = answering("GET", gets,
        () -> status(404, "NotFound", "not found").setBodyDelay(Duration.ofSeconds(60)));
        Fabric8LeaseTransport transport = transport(server, requests, MockApi.fastSettings("a").build())) {
      Answers read = new Answers();
      long sent = System.nanoTime();
      transport.read(read);

      assertThat(read.await()).isInstanceOfSatisfying(LeaseStep.Answer.Failed.class,
          failed -> assertThat(failed.kind()).isEqualTo(LeaseStep.FailureKind.OTHER));
      assertThat(Duration.ofNanos(System.nanoTime() - sent)).as("not before its request timeout")
          .isGreaterThanOrEqualTo(transport.requestTimeout());
      assertThat(read.failures.get(0)).hasMessageStartingWith("get Lease failed: timed out");
      assertThat(requests.inFlight()).isZero();
    }
  }

  /**
   * Whether a thread is in the transport's request path (a read, a write, an Event write). Not the watch's opening
   * nor the preflight's reviews, which do hold a worker while they wait, by design: another test's watch still
   * opening against a server that went away would otherwise count here.
   */
  private static boolean aThreadIsInTheTransport() {
    return !threadsInTheTransport().isEmpty();
  }

  /** The threads in the request path (see above), each with its stack, for the failure's message. */
  private static List<String> threadsInTheTransport() {
    return Thread.getAllStackTraces().entrySet().stream()
        .filter(thread -> java.util.Arrays.stream(thread.getValue())
            .anyMatch(frame -> Stream.of(Fabric8LeaseTransport.class, LeaseHttp.class)
                .anyMatch(type -> (frame.getClassName().equals(type.getName())
                    || frame.getClassName().startsWith(type.getName() + "$"))
                    && !frame.getMethodName().contains("reflight"))))
        .map(thread -> thread.getKey().getName() + " " + thread.getKey().getState() + " "
            + java.util.Arrays.toString(thread.getValue()))
        .collect(java.util.stream.Collectors.toList());
  }

  @Test
  void aReadAndEventWritesThatHangHoldNoThreadAndEndAtTheirRequestTimeout() throws Exception {
    AtomicInteger hung = new AtomicInteger();
    String events = "/api/v1/namespaces/" + MockApi.NAMESPACE + "/events";
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.startsWith(events) || path.startsWith(LEASES)) {
          hung.incrementAndGet();
          return new MockResponse().setResponseCode(201).setBody("{}").setBodyDelay(Duration.ofSeconds(60));
        }
        return delegate.dispatch(request);
      }
    })) {
      // A request timeout long enough that a thread held per request would still be held when it is looked for.
      LeaseSettings settings = MockApi.fastSettings("a").leaseDuration(Duration.ofSeconds(30))
          .renewDeadline(Duration.ofSeconds(20)).retryPeriod(Duration.ofSeconds(2)).build();
      try (Fabric8LeaseTransport transport = new Fabric8LeaseTransport(server.client(), MockApi.NAMESPACE, settings,
          SharedPools.io(), SharedPools.handOver(), new SharedPools.InFlight(64, "Lease requests"),
          new SharedPools.InFlight(16, "leadership Event writes"))) {
        Answers read = new Answers();
        transport.read(read);
        CountDownLatch written = new CountDownLatch(3);
        for (int i = 0; i < 3; i++) {
          transport.recordEvent(new LeadershipEvent(MockApi.LEASE + "." + (10 + i), LeadershipEvent.Kind.BECAME_LEADER,
              "a", i, "a became leader (fencing token " + i + ")", Instant.now()), written::countDown);
        }
        assertThat(Await.holds(() -> hung.get() == 4, PATIENCE)).as("all four reached the server").isTrue();

        assertThat(Await.holds(() -> !aThreadIsInTheTransport(), Duration.ofSeconds(5)))
            .as("no thread waits for the answers: %s", threadsInTheTransport()).isTrue();
        assertThat(read.await()).isInstanceOf(LeaseStep.Answer.Failed.class);
        assertThat(read.failures.get(0)).hasMessageStartingWith("get Lease failed: timed out");
        assertThat(written.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).as("every write's done ran").isTrue();
      }
    }
  }

  @Test
  void aRequestPastTheBoundIsRefusedAtOnce() throws Exception {
    AtomicInteger gets = new AtomicInteger();
    SharedPools.InFlight requests = new SharedPools.InFlight(1, "Lease requests");
    try (MockApi server = answering("GET", gets,
        () -> status(404, "NotFound", "not found").setBodyDelay(Duration.ofSeconds(60)));
        Fabric8LeaseTransport transport = transport(server, requests)) {
      Answers held = new Answers();
      transport.read(held);
      Answers refused = new Answers();
      transport.read(refused);

      assertThat(refused.first).as("refused at once, on the caller's thread").isDone();
      assertThat(refused.failures.get(0))
          .hasMessage("get Lease refused: 1 Lease requests are in flight in this JVM already");
      assertThat(requests.inFlight()).isEqualTo(1);
    }
  }

  @Test
  void theUsersCredentialsAndImpersonationGoWithEveryRequestAndEvent() throws Exception {
    List<String> seen = new CopyOnWriteArrayList<>();
    try (MockApi server = new MockApi(delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.startsWith(LEASES) || path.startsWith("/api/v1/namespaces/" + MockApi.NAMESPACE + "/events")) {
          seen.add(request.getMethod() + " " + request.getHeader("Authorization") + " "
              + request.getHeader("Impersonate-User") + " " + request.getHeader("Impersonate-Group"));
        }
        return delegate.dispatch(request);
      }
    })) {
      Config config = new ConfigBuilder(Config.empty()).withMasterUrl(server.url()).withNamespace(MockApi.NAMESPACE)
          .withOauthToken("s3cret").withImpersonateUsername("system:serviceaccount:elections:orders")
          .withImpersonateGroups("ops").build();
      try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config)
          .withHttpClientFactory(new JdkHttpClientFactory()).build();
          // A cold client's first request (a new connection, on a loaded machine) gets the time it needs.
          Fabric8LeaseTransport transport = new Fabric8LeaseTransport(client, MockApi.NAMESPACE,
              MockApi.fastSettings("a").leaseDuration(Duration.ofSeconds(30)).renewDeadline(Duration.ofSeconds(20))
                  .retryPeriod(Duration.ofSeconds(2)).build(), SharedPools.io())) {
        Answers create = new Answers();
        transport.create(record("a", null), create);
        assertThat(create.await()).isInstanceOf(LeaseStep.Answer.Written.class);
        Answers read = new Answers();
        transport.read(read);
        assertThat(read.await()).isInstanceOf(LeaseStep.Answer.Found.class);
        CountDownLatch recorded = new CountDownLatch(1);
        transport.recordEvent(new LeadershipEvent(MockApi.LEASE + ".1", LeadershipEvent.Kind.BECAME_LEADER, "a", 0,
            "a became leader (fencing token 0)", Instant.now()), recorded::countDown);
        assertThat(recorded.await(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isTrue();
      }
      assertThat(seen).containsExactly(
          "POST Bearer s3cret system:serviceaccount:elections:orders ops",
          "GET Bearer s3cret system:serviceaccount:elections:orders ops",
          "POST Bearer s3cret system:serviceaccount:elections:orders ops");
    }
  }

  /**
   * FINDING 1 (h-attack3). A 200 whose body is no Lease (a proxy's {@code {}}, a {@code Status} of kind Success)
   * was taken as a Lease: a read answered Found with no holder and no resourceVersion (the Lease looked free), so
   * the follower took it with an update that carried no resourceVersion, which the API server applies
   * unconditionally: over the real holder's term (two leaders). A write so answered counted as Written with no
   * resourceVersion, so every renewal went out unconditional too. Such an answer now fails the call (a write's as
   * unknown: it may have been applied), and it does not replace the last Lease seen.
   */
  @Test
  void aSuccessWhoseBodyIsNoLeaseFailsTheCallAndIsNotTakenForAFreeLease() throws Exception {
    for (String body : List.of("{}", "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Success\"}",
        "null", "")) {
      java.util.concurrent.atomic.AtomicBoolean broken = new java.util.concurrent.atomic.AtomicBoolean();
      try (MockApi server = new MockApi(delegate -> new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
          String path = request.getPath() == null ? "" : request.getPath();
          if (broken.get() && path.startsWith(LEASES) && !path.contains("watch=true")) {
            return new MockResponse().setResponseCode(200).setHeader("Content-Type", "application/json")
                .setBody(body);
          }
          return delegate.dispatch(request);
        }
      });
          Fabric8LeaseTransport transport = transport(server, new SharedPools.InFlight(64, "Lease requests"))) {
        server.client().leases().inNamespace(MockApi.NAMESPACE).resource(new LeaseBuilder()
            .withNewMetadata().withName(MockApi.LEASE).withNamespace(MockApi.NAMESPACE).addToLabels("team", "orders")
            .endMetadata().withNewSpec().withHolderIdentity("b").withLeaseDurationSeconds(2).endSpec().build())
            .create();
        Answers first = new Answers();
        transport.read(first); // the real Lease, remembered
        LeaseRecord seen = ((LeaseStep.Answer.Found) first.await()).record();

        broken.set(true);
        Answers read = new Answers();
        transport.read(read);
        assertThat(read.await()).as("a read answered %s", body).isInstanceOfSatisfying(
            LeaseStep.Answer.Failed.class, f -> assertThat(f.kind()).isEqualTo(LeaseStep.FailureKind.OTHER));
        Answers update = new Answers();
        transport.update(record("a", seen.resourceVersion()), update);
        assertThat(update.await()).as("a write answered %s", body).isInstanceOfSatisfying(
            LeaseStep.Answer.Failed.class, f -> assertThat(f.kind()).isEqualTo(LeaseStep.FailureKind.OTHER));

        broken.set(false);
        Answers again = new Answers();
        transport.update(record("a", seen.resourceVersion()), again);
        assertThat(again.await()).isInstanceOf(LeaseStep.Answer.Written.class);
        assertThat(server.lease().getMetadata().getLabels()).as("after %s", body).containsEntry("team", "orders");
      }
    }
  }

  /** FINDING 1 (h-attack3), the other guard: an update without a resourceVersion is never sent. */
  @Test
  void anUpdateWithoutAResourceVersionIsNeverSent() throws Exception {
    AtomicInteger puts = new AtomicInteger();
    SharedPools.InFlight requests = new SharedPools.InFlight(64, "Lease requests");
    try (MockApi server = answering("PUT", puts, () -> null);
        Fabric8LeaseTransport transport = transport(server, requests)) {
      Answers update = new Answers();
      transport.update(record("a", null), update);
      assertThat(update.await()).isInstanceOfSatisfying(LeaseStep.Answer.Failed.class,
          f -> assertThat(f.kind()).isEqualTo(LeaseStep.FailureKind.OTHER));
      Answers read = new Answers();
      transport.read(read);
      read.await();
      assertThat(puts.get()).as("PUTs the server received").isZero();
      assertThat(requests.inFlight()).isZero();
    }
  }

  /**
   * The sharded runner's Leases carry its label from their create on (its list and watch selects by it), and a
   * member's leaving mark goes out with its next write; the labels and annotations a user put on the Lease stay.
   */
  @Test
  void theMetadataToWriteGoesWithTheCreateAndEveryUpdateAndKeepsTheUsers() throws Exception {
    try (Fabric8LeaseTransport transport = transport(api, new SharedPools.InFlight(64, "Lease requests"))) {
      transport.writeMetadata(Map.of(ShardLeases.LABEL, "orders"), Map.of());
      Answers create = new Answers();
      transport.create(record("a", null), create);
      LeaseRecord created = ((LeaseStep.Answer.Written) create.await()).record();
      assertThat(api.lease().getMetadata().getLabels()).containsEntry(ShardLeases.LABEL, "orders");
      api.client().leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE)
          .edit(l -> new LeaseBuilder(l).editMetadata().addToLabels("team", "orders").endMetadata().build());
      Answers read = new Answers();
      transport.read(read);
      LeaseRecord seen = ((LeaseStep.Answer.Found) read.await()).record();

      transport.writeMetadata(Map.of(ShardLeases.LABEL, "orders"), Map.of(ShardLeases.LEAVING, "true"));
      Answers update = new Answers();
      transport.update(record("a", seen.resourceVersion()), update);

      assertThat(update.await()).isInstanceOf(LeaseStep.Answer.Written.class);
      assertThat(created.resourceVersion()).isNotEqualTo(seen.resourceVersion());
      Lease stored = api.lease();
      assertThat(stored.getMetadata().getLabels()).containsEntry(ShardLeases.LABEL, "orders")
          .containsEntry("team", "orders");
      assertThat(stored.getMetadata().getAnnotations()).containsEntry(ShardLeases.LEAVING, "true");
      assertThat(ShardLeaseSource.listed(stored).leaving()).isTrue();
    }
  }

  @Test
  void aWriteKeepsTheLabelsAndAnnotationsAUserPutOnTheLease() throws Exception {
    api.client().leases().inNamespace(MockApi.NAMESPACE).resource(new LeaseBuilder()
        .withNewMetadata().withName(MockApi.LEASE).withNamespace(MockApi.NAMESPACE)
        .addToLabels("team", "orders").addToAnnotations("owner", "ops@example.com").endMetadata()
        .withNewSpec().withHolderIdentity("someone").withLeaseDurationSeconds(2).endSpec().build()).create();
    try (Fabric8LeaseTransport transport = transport(api, new SharedPools.InFlight(64, "Lease requests"))) {
      Answers read = new Answers();
      transport.read(read);
      LeaseRecord seen = ((LeaseStep.Answer.Found) read.await()).record();
      Answers update = new Answers();
      transport.update(record("a", seen.resourceVersion()), update);

      assertThat(update.await()).isInstanceOf(LeaseStep.Answer.Written.class);
      Lease stored = api.lease();
      assertThat(stored.getSpec().getHolderIdentity()).isEqualTo("a");
      assertThat(stored.getMetadata().getLabels()).containsEntry("team", "orders");
      assertThat(stored.getMetadata().getAnnotations()).containsEntry("owner", "ops@example.com");
    }
  }

  /**
   * FINDING 3. Fabric8LeaseTransport.inFlight leaked the Call of every request cancelled while it waited in the I/O
   * queue (now: while its hand-over to the HTTP client waits there), as by the elector's request timeout with
   * the shared pool busy (many runners, or a slow API server):
   * Future.cancel() keeps the task from ever running, and only the task's own finally removes the Call. Each
   * leaked Call holds its answer callback (the elector, the loop), for as long as the runner lives.
   */
  @Test
  void aRequestCancelledWhileQueuedLeavesNothingInFlight() throws Exception {
    java.util.concurrent.ExecutorService io = java.util.concurrent.Executors.newSingleThreadExecutor();
    CountDownLatch busy = new CountDownLatch(1);
    try (Fabric8LeaseTransport transport = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
        MockApi.fastSettings("a").build(), io, io, new SharedPools.InFlight(SharedPools.IO_MAX_CALLS, "Lease calls"),
        SharedPools.eventWrites())) {
      io.execute(() -> {
        try {
          busy.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      for (int i = 0; i < 100; i++) {
        LeaseTransport.Call call = transport.read((answer, failure) -> { });
        call.cancel(); // as LeaseElector.timedOut does
      }
      busy.countDown();
      io.submit(() -> { }).get(5, TimeUnit.SECONDS); // the queue drained

      java.lang.reflect.Field field = Fabric8LeaseTransport.class.getDeclaredField("inFlight");
      field.setAccessible(true);
      assertThat((java.util.Set<?>) field.get(transport)).as("calls still held in flight").isEmpty();
    } finally {
      io.shutdownNow();
    }
  }

  /**
   * FINDING 3 (h-attack2). A pool that cannot start a thread throws an {@link Error} ("unable to create native
   * thread"), which BoundedCalls passed on; the transport caught only RejectedExecutionException, so the Error came
   * out of {@code read()} (and {@code watch()}) on the runner's loop and failed the election (ELECTION_FAILED, an
   * exit under {@code EXIT}) where a refused call is a failed call that the elector retries. The preflight's
   * reviews and the Event writes go through the same bound. A call the pool cannot start is refused like one past
   * the bound.
   */
  @Test
  void aCallThePoolCannotStartAThreadForFailsAsARefusedCall() {
    java.util.concurrent.ExecutorService noThread = new java.util.concurrent.AbstractExecutorService() {
      @Override
      public void execute(Runnable command) {
        throw new OutOfMemoryError("simulated: unable to create native thread");
      }

      @Override
      public void shutdown() {}

      @Override
      public java.util.List<Runnable> shutdownNow() {
        return java.util.List.of();
      }

      @Override
      public boolean isShutdown() {
        return false;
      }

      @Override
      public boolean isTerminated() {
        return false;
      }

      @Override
      public boolean awaitTermination(long timeout, TimeUnit unit) {
        return false;
      }
    };
    BoundedCalls io = new BoundedCalls(noThread, SharedPools.IO_MAX_CALLS);
    java.util.List<LeaseStep.Answer> answers = new java.util.ArrayList<>();
    boolean[] watchClosed = {false};
    SharedPools.InFlight requests = new SharedPools.InFlight(SharedPools.IO_MAX_CALLS, "Lease calls");
    try (Fabric8LeaseTransport transport = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
        MockApi.fastSettings("a").build(), io, SharedPools.handOverTo(noThread), requests,
        new SharedPools.InFlight(SharedPools.EVENTS_MAX_CALLS, "leadership Event writes"))) {
      // Caught here so that the simulated OutOfMemoryError fails the test instead of ending the test JVM.
      org.assertj.core.api.Assertions.assertThatCode(() -> {
        transport.read((answer, failure) -> answers.add(answer));
        transport.watch(new LeaseTransport.WatchEvents() {
          @Override
          public void opened() {}

          @Override
          public void changed(LeaseRecord record) {}

          @Override
          public void closed() {
            watchClosed[0] = true;
          }
        });
      }).doesNotThrowAnyException();
    }
    assertThat(answers).singleElement().isInstanceOf(LeaseStep.Answer.Failed.class);
    assertThat(watchClosed[0]).as("the watch is reported closed, so the elector polls").isTrue();
    assertThat(io.inFlight()).isZero();
    assertThat(requests.inFlight()).as("the refused read gave its place back").isZero();
  }
}
