package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.LogCapture;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The leadership Events on the Lease, as the embedded API server stores them: their content and order after a
 * hand-over, a crash and a loss; a denied {@code create} on events, reported by one WARN and nothing else; the
 * setting that turns them off; and an events endpoint that hangs, which the election does not wait for.
 */
class LeadershipEventsTest {

  private static final String EVENTS_PATH = "/api/v1/namespaces/" + MockApi.NAMESPACE + "/events";
  private static final String ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
  private static final String DENIED_WARNING = "may not create events in namespace \"" + MockApi.NAMESPACE + "\"";

  /** Long enough for a machine whose cores other builds share: nothing here measures time. */
  private static final Duration PATIENCE = Duration.ofSeconds(20);

  private final ServiceLog log = new ServiceLog();

  /**
   * The fixture's fast timings, slowed down a little: a spurious loss on a loaded machine would add Events the
   * tests do not expect.
   */
  private static LeaseSettings.Builder settings(String identity) {
    return MockApi.fastSettings(identity).leaseDuration(Duration.ofSeconds(4)).renewDeadline(Duration.ofSeconds(3))
        .retryPeriod(Duration.ofMillis(500));
  }

  private Replica startLeader(String name, io.fabric8.kubernetes.client.KubernetesClient client,
      LeaseSettings settings, ServiceLog log) throws InterruptedException {
    Replica replica = Replica.start(name, client, settings, log);
    if (!Replica.awaitTrue(replica::leads, PATIENCE)) {
      replica.close();
      throw new AssertionError(name + " did not lead: " + replica.runner.state());
    }
    return replica;
  }

  /** The leadership Events of the Lease, in the order their names (client-go's hex timestamps) give. */
  private static List<Event> events(MockApi api) {
    return api.client().v1().events().inNamespace(MockApi.NAMESPACE).list().getItems().stream()
        .filter(event -> LeadershipEvent.REASON.equals(event.getReason()))
        .sorted(Comparator.comparing((Event event) -> event.getMetadata().getName().length())
            .thenComparing(event -> event.getMetadata().getName()))
        .toList();
  }

  private static List<String> messages(MockApi api) {
    return events(api).stream().map(Event::getMessage).toList();
  }

  private static boolean awaitEvents(MockApi api, int count) throws InterruptedException {
    return Replica.awaitTrue(() -> events(api).size() >= count, PATIENCE);
  }

  private static int token(Replica replica) {
    return ((ElectionState.Leading) replica.runner.state()).term().leaseTransitions();
  }

  @Test
  void aHandOverAndACrashLeaveTheEventsOfEveryHolderInOrder() throws Exception {
    List<String> sentNames = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (MockApi api = new MockApi(recordingEventNames(sentNames))) {
      Replica a = startLeader("a", api.client(), settings("a").build(), log);
      int first = token(a);
      try (Replica b = Replica.start("b", api.client(), settings("b").build(), log)) {
        assertThat(Replica.awaitTrue(() -> b.runner.state().equals(new ElectionState.Following(Optional.of("a"))),
            PATIENCE)).isTrue();
        a.close();                                   // a hand-over: a releases, b takes the free Lease
        assertThat(Replica.awaitTrue(b::leads, PATIENCE)).isTrue();
        int second = token(b);
        try (Replica c = Replica.start("c", api.client(), settings("c").build(), log)) {
          assertThat(Replica.awaitTrue(() -> c.runner.state().equals(
              new ElectionState.Following(Optional.of("b"))), PATIENCE)).isTrue();
          RunnerHooks.crash(b.runner);               // a crash: b records nothing more, c takes over on expiry
          assertThat(Replica.awaitTrue(c::leads, PATIENCE)).isTrue();
          int third = token(c);
          assertThat(awaitEvents(api, 4)).isTrue();

          assertThat(messages(api)).containsExactly(
              "a became leader (fencing token " + first + ")",
              "a stopped leading (fencing token " + first + "): released the Lease",
              "b became leader (fencing token " + second + ")",
              "c became leader (fencing token " + third + "; previous holder b)");
          assertThat(second).isGreaterThan(first);
          assertThat(third).isGreaterThan(second);
          // client-go's names: <object>.<hex of the nanoseconds>, in the order they happened. (The embedded server
          // stores an Event under namespace/name, so the names are checked as sent.)
          assertThat(sentNames).hasSize(4).allSatisfy(name ->
              assertThat(name).matches(Pattern.quote(MockApi.LEASE) + "\\.[0-9a-f]{16}"));
          // In the order they happened: sorted by name, they read as the messages above; and each replica sent its
          // own in that order. (Across replicas the order they arrive in is not theirs to keep: a's end of term may
          // reach the server after b's new one, as each writes its Events from a worker of its own.)
          Map<String, String> senders = events(api).stream()
              .collect(Collectors.toMap(event -> event.getMetadata().getName(),
                  event -> event.getSource().getComponent()));
          assertThat(senders.keySet()).containsExactlyInAnyOrderElementsOf(sentNames);
          for (String sender : List.of("a", "b", "c")) {
            assertThat(sentNames.stream().filter(name -> sender.equals(senders.get(name))).toList())
                .as("the Events sent by %s, in the order they arrived", sender).isSorted();
          }
          String uid = api.lease().getMetadata().getUid();
          assertThat(events(api)).allSatisfy(event -> {
            assertThat(event.getType()).isEqualTo("Normal");
            assertThat(event.getReason()).isEqualTo("LeaderElection");
            assertThat(event.getInvolvedObject().getKind()).isEqualTo("Lease");
            assertThat(event.getInvolvedObject().getApiVersion()).isEqualTo("coordination.k8s.io/v1");
            assertThat(event.getInvolvedObject().getName()).isEqualTo(MockApi.LEASE);
            assertThat(event.getInvolvedObject().getNamespace()).isEqualTo(MockApi.NAMESPACE);
            assertThat(event.getInvolvedObject().getUid()).isEqualTo(uid);
            assertThat(event.getMessage()).startsWith(event.getSource().getComponent() + " ");
            assertThat(event.getReportingComponent()).isEqualTo("election-policy");
            assertThat(event.getReportingInstance()).isEqualTo(event.getSource().getComponent());
            assertThat(event.getCount()).isEqualTo(1);
            assertThat(event.getFirstTimestamp()).isNotNull().isEqualTo(event.getLastTimestamp());
          });
        }
      } finally {
        a.close();
      }
    }
  }

  @Test
  void aLeaseTakenByAnotherHolderIsALossWithItsCauseThenTheEndOfTheTerm() throws Exception {
    try (MockApi api = new MockApi();
        Replica a = startLeader("a", api.client(), settings("a").build(), log)) {
      int token = token(a);
      api.takeLeaseAs("intruder");
      assertThat(awaitEvents(api, 3)).isTrue();

      List<Event> events = events(api);
      assertThat(events.subList(0, 3)).extracting(Event::getType, Event::getMessage).containsExactly(
          org.assertj.core.groups.Tuple.tuple("Normal", "a became leader (fencing token " + token + ")"),
          org.assertj.core.groups.Tuple.tuple("Warning",
              "a lost leadership (fencing token " + token + "): the Lease was taken by intruder"),
          org.assertj.core.groups.Tuple.tuple("Normal", "a stopped leading (fencing token " + token + ")"));
    }
  }

  /** Refuses what RBAC would refuse an account without create on events; counts the Events sent. */
  private static UnaryOperator<Dispatcher> denyingEvents(AtomicInteger eventPosts) {
    return delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if ("POST".equals(request.getMethod()) && path.startsWith(EVENTS_PATH)) {
          eventPosts.incrementAndGet();
          return new MockResponse().setResponseCode(403).setHeader("Content-Type", "application/json")
              .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Forbidden\","
                  + "\"message\":\"events is forbidden: User \\\"a\\\" cannot create resource \\\"events\\\" in API "
                  + "group \\\"\\\" in the namespace \\\"" + MockApi.NAMESPACE + "\\\"\",\"code\":403}");
        }
        if (MockApi.isRulesReview(request)) {
          return MockApi.rulesReviewRefused(); // the access reviews decide: the events review below is asked
        }
        if ("POST".equals(request.getMethod()) && ACCESS_REVIEWS.equals(path)) {
          SelfSubjectAccessReview review = Serialization.unmarshal(body(request), SelfSubjectAccessReview.class);
          if ("events".equals(review.getSpec().getResourceAttributes().getResource())) {
            review.setStatus(new SubjectAccessReviewStatus(false, false, "no create on events", null));
            return new MockResponse().setResponseCode(201).setHeader("Content-Type", "application/json")
                .setBody(Serialization.asJson(review));
          }
        }
        return delegate.dispatch(request);
      }
    };
  }

  /** The request's body, read without consuming it (the fixture's dispatcher reads it after). */
  private static String body(RecordedRequest request) {
    return new String(request.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8);
  }

  /** Records the names of the Events as the runners send them. */
  private static UnaryOperator<Dispatcher> recordingEventNames(List<String> names) {
    return delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if ("POST".equals(request.getMethod()) && path.startsWith(EVENTS_PATH)) {
          names.add(Serialization.unmarshal(body(request), Event.class).getMetadata().getName());
        }
        return delegate.dispatch(request);
      }
    };
  }

  private static int count(String text, String part) {
    Matcher matcher = Pattern.compile(Pattern.quote(part)).matcher(text);
    int count = 0;
    while (matcher.find()) {
      count++;
    }
    return count;
  }

  private void handOver(MockApi api, boolean preflight) throws Exception {
    ElectionRunner a = ElectionRunner.builder().client(api.client()).decision(MockApi.CONTEND)
        .settings(settings("a").build()).service(log.service("a")).rbacPreflight(preflight).start();
    try {
      assertThat(Replica.awaitTrue(() -> a.state().kind() == ElectionState.Kind.LEADING, PATIENCE))
          .isTrue();
      try (ElectionRunner b = ElectionRunner.builder().client(api.client()).decision(MockApi.CONTEND)
          .settings(settings("b").build()).service(log.service("b")).rbacPreflight(preflight).start()) {
        assertThat(Replica.awaitTrue(() -> b.state().kind() == ElectionState.Kind.FOLLOWING, PATIENCE))
            .isTrue();
        a.close();
        assertThat(Replica.awaitTrue(() -> b.state().kind() == ElectionState.Kind.LEADING, PATIENCE))
            .as("the hand-over is not affected").isTrue();
      }
    } finally {
      a.close();
    }
  }

  @Test
  void aDeniedCreateOnEventsFoundByThePreflightIsOneWarningAndTheElectionGoesOn() throws Exception {
    AtomicInteger eventPosts = new AtomicInteger();
    try (MockApi api = new MockApi(denyingEvents(eventPosts)); LogCapture logs = new LogCapture()) {
      handOver(api, true);
      assertThat(Replica.awaitTrue(() -> eventPosts.get() >= 3, PATIENCE)).isTrue();

      String text = logs.text();
      assertThat(count(text, DENIED_WARNING)).as("one WARN per runner: a and b each found it").isEqualTo(2);
      assertThat(text).contains("WARN").contains("the RBAC preflight found create on events denied")
          .contains("resources: [\"events\"]").contains("verbs: [\"create\"]")
          .doesNotContain("the server refused to create the Event");
      assertThat(log.overlap()).isEmpty();
      assertThat(messages(api)).isEmpty();
    }
  }

  @Test
  void aDeniedCreateOnEventsWithoutThePreflightIsOneWarningPerRunnerAndTheElectionGoesOn() throws Exception {
    AtomicInteger eventPosts = new AtomicInteger();
    try (MockApi api = new MockApi(denyingEvents(eventPosts)); LogCapture logs = new LogCapture()) {
      handOver(api, false);
      // a: became leader, stopped leading; b: became leader. Each refused; a warned once for its two.
      assertThat(Replica.awaitTrue(() -> eventPosts.get() >= 3, PATIENCE)).isTrue();
      // The answers reach the log after the server counted the posts: a write holds its place among the Event
      // writes in flight until its answer was handled (logged), so none in flight means all three were.
      assertThat(Replica.awaitTrue(() -> SharedPools.eventWrites().inFlight() == 0, PATIENCE))
          .as("the answers of the refused writes were handled").isTrue();

      String text = logs.text();
      assertThat(count(text, DENIED_WARNING)).isEqualTo(2);
      assertThat(count(text, "the server refused to create the Event \"a ")).isEqualTo(1);
      assertThat(count(text, "the server refused to create the Event \"b ")).isEqualTo(1);
      assertThat(text).contains("HTTP 403");
      assertThat(log.overlap()).isEmpty();
    }
  }

  @Test
  void theSettingTurnsTheEventsAndTheirReviewOff() throws Exception {
    AtomicInteger eventPosts = new AtomicInteger();
    AtomicInteger eventReviews = new AtomicInteger();
    UnaryOperator<Dispatcher> counting = delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if ("POST".equals(request.getMethod()) && path.startsWith(EVENTS_PATH)) {
          eventPosts.incrementAndGet();
        }
        if ("POST".equals(request.getMethod()) && ACCESS_REVIEWS.equals(path) && body(request)
            .contains("\"events\"")) {
          eventReviews.incrementAndGet();
        }
        if (MockApi.isRulesReview(request)) {
          return MockApi.rulesReviewRefused(); // the access reviews decide: a runner with Events on asks
        }
        return delegate.dispatch(request);
      }
    };
    try (MockApi api = new MockApi(counting)) {
      LeaseSettings off = settings("a").leadershipEvents(false).build();
      assertThat(off.leadershipEvents()).isFalse();
      assertThat(off.toBuilder().build().leadershipEvents()).as("toBuilder keeps it").isFalse();
      assertThat(off.toString()).contains("leadershipEvents=false");
      try (Replica a = startLeader("a", api.client(), off, log)) {
        api.takeLeaseAs("intruder");                       // a loss too
        assertThat(Replica.awaitTrue(() -> !a.leads(), PATIENCE)).isTrue();
      }
      // The same course with the Events on writes three (became leader, lost, stopped leading): see above.
      try (Replica b = startLeader("b", api.client(), settings("b").build(), log)) {
        assertThat(Replica.awaitTrue(() -> eventPosts.get() >= 1, PATIENCE)).isTrue();
      }

      assertThat(messages(api)).allSatisfy(message -> assertThat(message).startsWith("b "));
      assertThat(eventReviews.get()).as("one review, b's").isEqualTo(1);
    }
  }

  @Test
  void anEventsEndpointThatHangsDelaysNeitherLeadingNorRenewingNorTheHandOver() throws Exception {
    CountDownLatch eventArrived = new CountDownLatch(1);
    AtomicInteger eventPosts = new AtomicInteger();
    List<String> sentMessages = new java.util.concurrent.CopyOnWriteArrayList<>();
    UnaryOperator<Dispatcher> hanging = delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if ("POST".equals(request.getMethod()) && path.startsWith(EVENTS_PATH)) {
          eventPosts.incrementAndGet();
          sentMessages.add(Serialization.unmarshal(body(request), Event.class).getMessage());
          eventArrived.countDown();
          // The answer never comes in time (a dispatcher that blocked would stall the whole embedded server).
          return new MockResponse().setResponseCode(201).setBody("{}").setBodyDelay(Duration.ofSeconds(30));
        }
        return delegate.dispatch(request);
      }
    };
    try (MockApi api = new MockApi(hanging)) {
      Replica a = startLeader("a", api.client(), settings("a").build(), log);
      try (Replica b = Replica.start("b", api.client(), settings("b").build(), log)) {
        assertThat(eventArrived.await(5, TimeUnit.SECONDS)).as("a's became leader hangs at the server").isTrue();
        long hungSince = System.nanoTime();
        // a keeps renewing while its Event hangs: writes of a's term the server accepted after the Event came.
        assertThat(Replica.awaitTrue(() -> api.writes().stream()
            .filter(write -> "a".equals(write.spec().getHolderIdentity()))
            .filter(write -> write.receivedNanos() - hungSince > 0).count() >= 3, PATIENCE))
            .isTrue();
        assertThat(a.leads()).isTrue();
        assertThat(Replica.awaitTrue(() -> b.runner.state().kind() == ElectionState.Kind.FOLLOWING,
            PATIENCE)).isTrue();

        a.close();
        assertThat(a.runner.state().kind()).as("close() returned, without waiting for the Event")
            .isEqualTo(ElectionState.Kind.STOPPED);
        assertThat(Replica.awaitTrue(b::leads, PATIENCE)).as("the hand-over went on").isTrue();
        // Each write timed out on its own and none was sent again: a's two, then b's.
        assertThat(Replica.awaitTrue(() -> eventPosts.get() >= 3, PATIENCE)).isTrue();
        assertThat(sentMessages).doesNotHaveDuplicates();
        assertThat(messages(api)).as("none was stored").isEmpty();
      } finally {
        a.close();
      }
    }
  }

  @Test
  void theTransportHandsTheWriteToAnIoThreadAndReturnsBeforeTheAnswer() throws Exception {
    UnaryOperator<Dispatcher> hanging = delegate -> new Dispatcher() {
      @Override
      public MockResponse dispatch(RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if ("POST".equals(request.getMethod()) && path.startsWith(EVENTS_PATH)) {
          return new MockResponse().setResponseCode(201).setBody("{}").setBodyDelay(Duration.ofSeconds(30));
        }
        return delegate.dispatch(request);
      }
    };
    try (MockApi api = new MockApi(hanging);
        Fabric8LeaseTransport transport = new Fabric8LeaseTransport(api.client(), MockApi.NAMESPACE,
            settings("a").build(), SharedPools.io())) {
      CountDownLatch done = new CountDownLatch(1);
      AtomicInteger answers = new AtomicInteger();
      LeadershipEvent event = new LeadershipEvent(MockApi.LEASE + ".1", LeadershipEvent.Kind.BECAME_LEADER, "a", 0,
          "a became leader (fencing token 0)", java.time.Instant.now());

      transport.recordEvent(event, () -> {
        answers.incrementAndGet();
        done.countDown();
      });

      assertThat(done.getCount()).as("returned before the server answered").isEqualTo(1);
      assertThat(done.await(5, TimeUnit.SECONDS)).as("given up after the request timeout").isTrue();
      assertThat(answers.get()).isEqualTo(1);
    }
  }
}
