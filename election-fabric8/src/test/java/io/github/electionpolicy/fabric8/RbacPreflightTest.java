package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import io.github.electionpolicy.testsupport.LogCapture;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Before contending, off the caller's thread, the RBAC preflight checks that the Lease may be read, created and
 * updated: one SelfSubjectRulesReview when its rules allow it all, else SelfSubjectAccessReviews per verb; a
 * denial stops the runner and says what to fix.
 */
class RbacPreflightTest {

  @RegisterExtension
  final MockApi api = new MockApi();
  private final ServiceLog log = new ServiceLog();

  @Test
  void aDeniedVerbStopsTheRunnerBeforeItContendsNamingTheVerbAndTheRole() throws Exception {
    api.answeringAccessReviews().denying(Set.of("update"));
    List<String> changes = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        changes.add(previous.kind() + "->" + current.kind());
      }
    };

    try (LogCapture logs = new LogCapture();
        Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log, listener)) {
      assertThat(a.runner.awaitStopped(Duration.ofSeconds(5))).isTrue();

      assertThat(a.runner.startupFailure()).hasValueSatisfying(e -> {
        assertThat(e.missingVerbs()).containsExactly("update");
        assertThat(e.namespace()).isEqualTo(MockApi.NAMESPACE);
        assertThat(e.leaseName()).isEqualTo(MockApi.LEASE);
        assertThat(e).hasMessageContaining("may not update leases")
            .hasMessageContaining("it needs get, create, update")
            .hasMessageContaining(LeaseAccess.roleYaml(MockApi.NAMESPACE, MockApi.LEASE));
      });
      assertThat(a.runner.state()).isInstanceOfSatisfying(ElectionState.Stopped.class, stopped -> {
        assertThat(stopped.cause()).isEqualTo(ElectionState.StopCause.ACCESS_DENIED);
        assertThat(stopped.failure()).containsSame(a.runner.startupFailure().orElseThrow());
      });
      assertThat(a.runner.isClosed()).as("stopped on its own, not closed").isFalse();
      assertThat(a.runner.health().ready()).isFalse();
      assertThat(logs.text()).contains("ERROR")
          .contains("Not contending for Lease " + MockApi.NAMESPACE + "/" + MockApi.LEASE
              + ": leader election may not update leases")
          .contains("kind: Role");
      assertThat(Replica.awaitTrue(() -> changes.size() == 1, Duration.ofSeconds(2))).isTrue();
      assertThat(changes).containsExactly("STARTING->STOPPED");
    }
    assertThat(log.entries()).as("no reconciler started").isEmpty();
    assertThat(api.lease()).as("no Lease written").isNull();
  }

  /**
   * The first read goes out beside the reviews (a read changes nothing); the take it decides waits for their
   * verdict. Here the reviews answer a second late, long after the server has answered that read, and deny
   * {@code update}: the runner stops as it did when it read nothing, without a write and without showing whom
   * its read found.
   */
  @Test
  void aDenialThatComesAfterTheFirstReadStopsTheRunnerBeforeAnyWrite() throws Exception {
    java.util.concurrent.atomic.AtomicInteger leaseReads = new java.util.concurrent.atomic.AtomicInteger();
    java.util.function.UnaryOperator<io.fabric8.mockwebserver.http.Dispatcher> reviewsAfterTheRead =
        delegate -> new io.fabric8.mockwebserver.http.Dispatcher() {
          @Override
          public io.fabric8.mockwebserver.http.MockResponse dispatch(
              io.fabric8.mockwebserver.http.RecordedRequest request) {
            String path = request.getPath() == null ? "" : request.getPath();
            if (path.contains("selfsubjectaccessreviews")) {
              // Delayed by the server's timer, not by blocking its dispatch: a review that blocked it held the
              // read back too under fabric8 7.6.1's mock server (the read then never reached it).
              return delegate.dispatch(request).setBodyDelay(Duration.ofSeconds(1));
            }
            if ("GET".equals(request.getMethod()) && path.contains("/leases/" + MockApi.LEASE)
                && !path.contains("watch=true")) {
              leaseReads.incrementAndGet();
            }
            return delegate.dispatch(request);
          }
        };
    List<String> changes = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        changes.add(previous.kind() + "->" + current.kind());
      }
    };
    try (MockApi slow = new MockApi(reviewsAfterTheRead)) {
      slow.answeringAccessReviews().denying(Set.of("update"));
      try (Replica a = Replica.start("a", slow.client(), MockApi.fastSettings("a").build(), log, listener)) {
        assertThat(a.runner.awaitStopped(Duration.ofSeconds(10))).isTrue();
        assertThat(a.runner.startupFailure()).hasValueSatisfying(
            e -> assertThat(e.missingVerbs()).containsExactly("update"));
        assertThat(Replica.awaitTrue(() -> changes.size() == 1, Duration.ofSeconds(2))).isTrue();
        assertThat(changes).as("no FOLLOWING from the read").containsExactly("STARTING->STOPPED");
      }
      assertThat(leaseReads.get()).as("the read went out beside the reviews").isPositive();
      assertThat(slow.writes()).as("no Lease write").isEmpty();
      assertThat(slow.lease()).isNull();
    }
    assertThat(log.entries()).as("no reconciler started").isEmpty();
  }

  /** The reviews the server was asked, by kind, in the order it was asked them. */
  private static MockApi countingReviews(List<String> reviews) {
    return new MockApi(delegate -> new io.fabric8.mockwebserver.http.Dispatcher() {
      @Override
      public io.fabric8.mockwebserver.http.MockResponse dispatch(
          io.fabric8.mockwebserver.http.RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.endsWith("reviews")) {
          reviews.add(path.substring(path.lastIndexOf('/') + 1));
        }
        return delegate.dispatch(request);
      }
    });
  }

  /** The usual case: the rules the server lists allow every verb, so that one review is the whole preflight. */
  @Test
  void rulesThatAllowEveryVerbAreTheVerdictWithoutAnAccessReview() throws Exception {
    List<String> reviews = new CopyOnWriteArrayList<>();
    try (MockApi counted = countingReviews(reviews)) {
      counted.answeringAccessReviews();
      try (Replica a = Replica.start("a", counted.client(), MockApi.fastSettings("a").build(), log)) {
        assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
        assertThat(a.runner.startupFailure()).isEmpty();
      }
    }
    assertThat(reviews).containsExactly("selfsubjectrulesreviews");
  }

  /**
   * Rules that do not show a verb allowed prove no denial (a list may be incomplete): the access reviews decide,
   * and here they deny it.
   */
  @Test
  void rulesWithoutAVerbLeaveTheVerdictToTheAccessReviews() throws Exception {
    List<String> reviews = new CopyOnWriteArrayList<>();
    try (MockApi counted = countingReviews(reviews)) {
      counted.answeringAccessReviews().denying(Set.of("update"));
      try (Replica a = Replica.start("a", counted.client(), MockApi.fastSettings("a").build(), log)) {
        assertThat(a.runner.awaitStopped(Duration.ofSeconds(5))).isTrue();
        assertThat(a.runner.startupFailure()).hasValueSatisfying(
            e -> assertThat(e.missingVerbs()).containsExactly("update"));
      }
    }
    assertThat(reviews).first().isEqualTo("selfsubjectrulesreviews");
    assertThat(reviews).filteredOn("selfsubjectaccessreviews"::equals).hasSizeGreaterThanOrEqualTo(3);
    assertThat(log.entries()).isEmpty();
  }

  @Test
  void aDeniedVerbUnderExitExitsOnceBeforeTheRunnerStops() throws Exception {
    api.answeringAccessReviews().denying(Set.of("create", "update"));
    List<Integer> exits = new CopyOnWriteArrayList<>();
    List<ElectionState.Kind> stateAtExit = new CopyOnWriteArrayList<>();
    AtomicReference<ElectionRunner> runner = new AtomicReference<>();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(status -> {
      exits.add(status);
      stateAtExit.add(runner.get() == null ? null : runner.get().state().kind());
    })).build();

    try (Replica a = Replica.start("a", api.client(), settings, log)) {
      runner.set(a.runner);
      assertThat(a.runner.awaitStopped(Duration.ofSeconds(5))).isTrue();

      assertThat(exits).containsExactly(LossPolicy.LOSS_EXIT_STATUS);
      assertThat(a.runner.startupFailure()).hasValueSatisfying(
          e -> assertThat(e.missingVerbs()).containsExactly("create", "update"));
    }
    assertThat(stateAtExit).doesNotContain(ElectionState.Kind.STOPPED);
    assertThat(log.entries()).isEmpty();
  }

  @Test
  void aGrantedPreflightLeavesNoStartupFailure() throws Exception {
    api.answeringAccessReviews();

    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();

      assertThat(a.runner.startupFailure()).isEmpty();
    }
  }

  @Test
  void deniedWatchOnlyWarnsAndTheReplicaStillLeads() throws Exception {
    api.answeringAccessReviews().denying(Set.of("watch"));

    try (LogCapture logs = new LogCapture();
        Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
      // watch only decides this warning: it is asked once the verdict is given, so it may come after the take.
      assertThat(Replica.awaitTrue(() -> logs.text().contains("may not watch leases"), Duration.ofSeconds(5)))
          .isTrue();
      assertThat(logs.text()).contains("WARN")
          .contains("may not watch leases in namespace \"" + MockApi.NAMESPACE + "\"")
          .contains("a graceful hand-over takes up to one retry period (200ms) instead of milliseconds")
          .contains("every retry period instead of once per lease duration (2s)")
          .contains("kind: Role");
    }
  }

  @Test
  void refusedReviewApiOnlyWarnsAndTheReplicaStillLeads() throws Exception {
    api.server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .andReturn(403, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":403}")
        .always();

    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
    }
  }

  @Test
  void preflightCanBeTurnedOff() throws Exception {
    api.answeringAccessReviews().denying(Set.of("get", "create", "update"));

    try (ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(log.service("a"))
        .rbacPreflight(false)
        .start()) {
      assertThat(Replica.awaitTrue(() -> runner.state().kind() == ElectionState.Kind.LEADING,
          Duration.ofSeconds(5))).isTrue();
    }
  }

  // ---- the sharded runner: its membership runner's preflight asks what the whole replica uses ----------

  private static final String MEMBER_LEASE = MockApi.LEASE + "-member-a";

  /** The access reviews the server was asked, as {@code verb} or {@code verb:name}, in the order it was asked. */
  private static MockApi recordingAccessReviews(List<String> asked) {
    return new MockApi(delegate -> new io.fabric8.mockwebserver.http.Dispatcher() {
      @Override
      public io.fabric8.mockwebserver.http.MockResponse dispatch(
          io.fabric8.mockwebserver.http.RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if (path.endsWith("selfsubjectaccessreviews")) {
          // Read without consuming it (getUtf8Body() would leave the fixture an empty body).
          String body = new String(request.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8);
          var attributes = io.fabric8.kubernetes.client.utils.Serialization.unmarshal(body,
              io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview.class)
              .getSpec().getResourceAttributes();
          if ("leases".equals(attributes.getResource())) {
            asked.add(attributes.getVerb() + (attributes.getName() == null ? "" : ":" + attributes.getName()));
          }
        }
        return delegate.dispatch(request);
      }
    });
  }

  private static ShardedRunner sharded(KubernetesClientSource client, ShardService service) {
    return ShardedRunner.builder().client(client.get()).decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build()).shards(4).service(service).start();
  }

  /** Where the sharded runner's client comes from (a server of the test's own, or the extension's). */
  @FunctionalInterface
  private interface KubernetesClientSource {
    io.fabric8.kubernetes.client.KubernetesClient get();
  }

  private static final ShardService NO_WORK = new ShardService() {
    @Override
    public void start(int shard, LeadershipTerm term) {}

    @Override
    public void stop(int shard) {}
  };

  /**
   * Without {@code list} on leases the replica's one list and watch of the shards' and members' Leases never lists
   * them, so it would never own a shard: the preflight stops it before it joins, naming the verb, the namespace and
   * the Role that grants what a sharded runner uses (the access reviews decide: the rules do not show list allowed).
   */
  @Test
  void aShardedRunnerWithoutListOnLeasesStopsBeforeItJoinsNamingTheVerbAndTheRole() throws Exception {
    List<String> asked = new CopyOnWriteArrayList<>();
    try (MockApi counted = recordingAccessReviews(asked); LogCapture logs = new LogCapture()) {
      counted.denying(Set.of("list"));
      ShardedRunner runner = sharded(counted::client, NO_WORK);
      try {
        assertThat(runner.awaitStopped(Duration.ofSeconds(10))).isTrue();
        assertThat(runner.failure()).hasValueSatisfying(failure -> assertThat(failure)
            .isInstanceOfSatisfying(LeaseAccessDeniedException.class, denied -> {
              assertThat(denied.missingVerbs()).containsExactly("list");
              assertThat(denied.namespace()).isEqualTo(MockApi.NAMESPACE);
              assertThat(denied.leaseName()).isEqualTo(MEMBER_LEASE);
              assertThat(denied).hasMessageContaining("may not list leases (coordination.k8s.io) in namespace \""
                      + MockApi.NAMESPACE + "\"")
                  .hasMessageContaining("a sharded runner needs get, create, update, list, watch on every Lease")
                  .hasMessageContaining(LeaseNeeds.shardedRoleYaml(MockApi.NAMESPACE, MockApi.LEASE))
                  .hasMessageContaining("verbs: [\"get\", \"list\", \"watch\", \"create\", \"update\", "
                      + "\"delete\"]");
            }));
        assertThat(runner.ownedShards()).isEmpty();
      } finally {
        runner.close();
      }
      assertThat(logs.text()).contains("ERROR")
          .contains("Not contending for Lease " + MockApi.NAMESPACE + "/" + MEMBER_LEASE
              + ": leader election may not list leases");
      assertThat(counted.fixture.lease(MEMBER_LEASE)).as("no membership Lease written").isEmpty();
    }
    // Every one on every Lease (no name): the replica writes its shards' Leases too, so a Role that names only its
    // membership Lease must not pass; create has no name anyway.
    assertThat(asked).containsExactlyInAnyOrder("get", "create", "update", "list", "watch");
  }

  /** The requests the server was sent, as {@code METHOD path}, in the order it received them. */
  private static MockApi recordingRequests(List<String> sent) {
    return new MockApi(delegate -> new io.fabric8.mockwebserver.http.Dispatcher() {
      @Override
      public io.fabric8.mockwebserver.http.MockResponse dispatch(
          io.fabric8.mockwebserver.http.RecordedRequest request) {
        sent.add(request.getMethod() + " " + request.getPath());
        return delegate.dispatch(request);
      }
    });
  }

  /** Whether {@code request} lists or watches the namespace's Leases (a GET of the collection, by label). */
  private static boolean listsLeases(String request) {
    String path = request.substring(request.indexOf(' ') + 1).split("\\?")[0];
    return request.startsWith("GET ")
        && path.equals("/apis/coordination.k8s.io/v1/namespaces/" + MockApi.NAMESPACE + "/leases");
  }

  /**
   * A replica its preflight stops sends no list (issue 17): the view's list and watch opens only once the membership
   * runner may write, so the server never refuses a list (on the real one, fabric8's informer logged that 403 at
   * ERROR before the runner's own message). Whether {@code list} itself or another required verb is denied.
   */
  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.ValueSource(strings = {"list", "update"})
  void aShardedRunnerThePreflightStopsSendsNoListOfTheLeases(String denied) throws Exception {
    List<String> sent = new CopyOnWriteArrayList<>();
    try (MockApi counted = recordingRequests(sent)) {
      counted.denying(Set.of(denied));
      ShardedRunner runner = sharded(counted::client, NO_WORK);
      try {
        assertThat(runner.awaitStopped(Duration.ofSeconds(10))).isTrue();
        assertThat(runner.failure()).hasValueSatisfying(failure -> assertThat(failure)
            .isInstanceOfSatisfying(LeaseAccessDeniedException.class,
                e -> assertThat(e.missingVerbs()).containsExactly(denied)));
      } finally {
        runner.close();
      }
    }
    assertThat(sent).as("the access reviews were asked").anyMatch(r -> r.contains("selfsubjectaccessreviews"));
    assertThat(sent).as("no list or watch of the Leases").noneMatch(RbacPreflightTest::listsLeases);
  }

  /** Granted, the list goes out once the verdict came: after the rules review that gave it. */
  @Test
  void aShardedRunnerListsTheLeasesOnceItsPreflightGranted() throws Exception {
    List<String> sent = new CopyOnWriteArrayList<>();
    try (MockApi counted = recordingRequests(sent)) {
      ShardedRunner runner = sharded(counted::client, NO_WORK);
      try {
        Await.until("the replica owns every shard", () -> runner.ownedShards().size() == 4,
            () -> runner.ownedShards() + " " + runner.failure());
      } finally {
        runner.close();
      }
    }
    int review = sent.indexOf(sent.stream().filter(r -> r.contains("selfsubjectrulesreviews")).findFirst()
        .orElseThrow());
    int list = sent.indexOf(sent.stream().filter(RbacPreflightTest::listsLeases).findFirst().orElseThrow());
    assertThat(list).as("the first list after the rules review, in %s", sent).isGreaterThan(review);
  }

  @Test
  void aShardedRunnerWithoutWatchOnEveryLeaseStopsToo() throws Exception {
    api.denying(Set.of("watch"));
    ShardedRunner runner = sharded(api::client, NO_WORK);
    try {
      assertThat(runner.awaitStopped(Duration.ofSeconds(10))).isTrue();
      assertThat(runner.failure()).hasValueSatisfying(failure -> assertThat(failure)
          .isInstanceOfSatisfying(LeaseAccessDeniedException.class,
              denied -> assertThat(denied.missingVerbs()).containsExactly("watch")));
    } finally {
      runner.close();
    }
  }

  /**
   * Without {@code delete} the replica runs as before (a clean close then leaves its membership Lease behind,
   * released): the preflight warns, once the verdict is given, naming the verb, the namespace, the Lease and the rule
   * to add. The rules review showed every required verb allowed, so delete is asked on its own afterwards.
   */
  @Test
  void aShardedRunnerWithoutDeleteOwnsItsShardsAndWarnsNamingTheVerbAndTheRule() throws Exception {
    List<String> asked = new CopyOnWriteArrayList<>();
    try (MockApi counted = recordingAccessReviews(asked); LogCapture logs = new LogCapture()) {
      counted.denying(Set.of("delete"));
      ShardedRunner runner = sharded(counted::client, NO_WORK);
      try {
        Await.until("the replica owns every shard", () -> runner.ownedShards().size() == 4,
            () -> runner.ownedShards() + " " + runner.failure());
        Await.until("the delete warning", () -> logs.text().contains("may not delete leases"));
        assertThat(runner.failure()).isEmpty();
        assertThat(logs.text()).contains("WARN")
            .contains("may not delete leases in namespace \"" + MockApi.NAMESPACE + "\"")
            .contains("its membership Lease " + MEMBER_LEASE + " stays behind, released")
            .contains(LeaseNeeds.shardedLeaseRuleYaml());
      } finally {
        runner.close();
      }
    }
    assertThat(asked).as("the rules showed the required verbs allowed: only delete is asked")
        .containsExactly("delete:" + MEMBER_LEASE);
  }

  /**
   * The close's delete of the membership Lease, refused with a 403: warned of once in all. When the preflight warned
   * already (with the rule to add) the refusal is one INFO line; when the preflight saw nothing of it (its review
   * said allowed), the refusal is the warning.
   */
  @Test
  void aRefusedDeleteAtCloseWarnsOnlyWhenThePreflightDidNot() throws Exception {
    for (boolean reviewDenies : new boolean[] {true, false}) {
      String logged;
      try (MockApi api = refusingLeaseDeletes(); LogCapture logs = new LogCapture()) {
        if (reviewDenies) {
          api.denying(Set.of("delete"));
        }
        ShardedRunner runner = sharded(api::client, NO_WORK);
        try {
          Await.until("the replica owns every shard", () -> runner.ownedShards().size() == 4,
              () -> runner.ownedShards() + " " + runner.failure());
          if (reviewDenies) {
            Await.until("the delete warning", () -> logs.text().contains("may not delete leases"));
          }
        } finally {
          runner.close();
        }
        logged = logs.text();
      }
      List<String> warned = logged.lines().filter(line -> line.contains(" WARN "))
          .filter(line -> line.contains("delete")).toList();
      assertThat(warned).as("one warning of the delete (review denies: %s), in %s", reviewDenies, logged)
          .singleElement().asString()
          .contains(reviewDenies ? "may not delete leases" : "was released but could not be deleted");
      assertThat(logged.lines().anyMatch(line -> line.contains(" INFO ")
          && line.contains("stays, not deleted (delete Lease failed: HTTP 403")
          && line.contains("as the RBAC preflight warned")))
          .as("the refusal as INFO (review denies: %s), in %s", reviewDenies, logged).isEqualTo(reviewDenies);
    }
  }

  /** Refuses every delete of a Lease with a 403, as a server whose Role lacks the verb does. */
  private static MockApi refusingLeaseDeletes() {
    return new MockApi(delegate -> new io.fabric8.mockwebserver.http.Dispatcher() {
      @Override
      public io.fabric8.mockwebserver.http.MockResponse dispatch(
          io.fabric8.mockwebserver.http.RecordedRequest request) {
        String path = request.getPath() == null ? "" : request.getPath();
        if ("DELETE".equals(request.getMethod()) && path.contains("/leases/")) {
          return MockApi.rulesReviewRefused();
        }
        return delegate.dispatch(request);
      }
    });
  }

  @Test
  void aShardedRunnerWhoseRulesAllowEveryVerbAsksNoAccessReview() throws Exception {
    List<String> asked = new CopyOnWriteArrayList<>();
    try (MockApi counted = recordingAccessReviews(asked)) {
      ShardedRunner runner = sharded(counted::client, NO_WORK);
      try {
        Await.until("the replica owns every shard", () -> runner.ownedShards().size() == 4);
        assertThat(runner.failure()).isEmpty();
      } finally {
        runner.close();
      }
    }
    assertThat(asked).isEmpty();
  }

  // ---- finding 7 of the review of the start-up, settings and health changes --------------------------

  /**
   * Attack: awaitStopped() documents that it may be called "from one of the runner's own threads (a reconciler,
   * listener, loss handler or exiter)". An exiter is exactly where one would wait for the runner to be done
   * before ending the process. But under EXIT the exiter runs BEFORE the runner reports STOPPED (LossReaction
   * startFailed/exit: "Exit before reporting STOPPED"), on the election thread that would report it: the
   * exiter's awaitStopped() waits on a latch only it can release. The untimed awaitStopped() deadlocks the
   * election thread for ever: the runner never reaches STOPPED, the process never exits after the RBAC denial.
   * (The same holds for a custom LossHandler calling awaitStopped() before returning STOP.)
   *
   * <p>Fix: count the stopped latch down (or make awaitStopped return at once) when called on the election
   * thread; or stop documenting exiters and loss handlers as callers.
   */
  @Test
  void awaitStoppedFromTheExiterReturnsAfterAPreflightDenial() throws Exception {
    api.denying(Set.of("update"));
    AtomicReference<ElectionRunner> runner = new AtomicReference<>();
    CountDownLatch runnerKnown = new CountDownLatch(1);
    List<Boolean> stoppedSeenByExiter = new CopyOnWriteArrayList<>();
    LeaseSettings settings = MockApi.fastSettings("a").lossPolicy(LossPolicy.exit(status -> {
      try {
        runnerKnown.await(5, TimeUnit.SECONDS);
        // On the election thread it returns at once (the runner stops once this exiter returns): before the
        // fix it waited for itself, and the untimed awaitStopped() never returned.
        long before = System.nanoTime();
        runner.get().awaitStopped();
        boolean stoppedYet = runner.get().awaitStopped(Duration.ofSeconds(3));
        stoppedSeenByExiter.add(!stoppedYet && System.nanoTime() - before < Duration.ofSeconds(1).toNanos());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    })).build();

    try (Replica a = Replica.start("a", api.client(), settings, log)) {
      runner.set(a.runner);
      runnerKnown.countDown();
      assertThat(a.runner.awaitStopped(Duration.ofSeconds(10))).isTrue();

      assertThat(stoppedSeenByExiter).containsExactly(true);
    }
  }
}
