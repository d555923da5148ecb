package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sharded runner under faults of the server and the network: a list and watch ended by a watch error, a first list
 * that fails, a watch cut mid-hand-over, a leaving mark's renewal answered 500 or 409, a failed membership delete, a
 * stop hung past the stop timeout, a replica started again under the same identity while the old one is cut off, and a
 * take that must keep the user's metadata. Each test guards a promise of the runner's Javadoc, docs or CHANGELOG that an
 * adversarial review (h-attack12) found broken and was fixed with it, or, marked sound, a probe that held.
 */
class ShardedRunnerFaultsTest {

  /** Answers a request its own way when {@link #fault} gives a response for it; else the fixture answers. */
  private final Faults faults = new Faults();

  @RegisterExtension
  final MockApi api = new MockApi(faults::around);

  private final List<ShardedRunner> runners = new ArrayList<>();
  private final Map<Integer, String> running = new ConcurrentHashMap<>();
  private final List<String> overlaps = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() {
    faults.clear();
    runners.forEach(ShardedRunner::close);
  }

  /** Injected answers: the first rule that answers a request wins. */
  static final class Faults {
    private final List<Function<RecordedRequest, MockResponse>> rules = new CopyOnWriteArrayList<>();
    // Requests the fixture answers (its store changed at once, its watches told) with the answer's body held back.
    private final List<java.util.function.Predicate<RecordedRequest>> late = new CopyOnWriteArrayList<>();
    private volatile Duration lateBy = Duration.ZERO;

    Dispatcher around(Dispatcher delegate) {
      return new Dispatcher() {
        @Override
        public MockResponse dispatch(RecordedRequest request) {
          for (Function<RecordedRequest, MockResponse> rule : rules) {
            MockResponse response = rule.apply(request);
            if (response != null) {
              return response;
            }
          }
          MockResponse response = delegate.dispatch(request);
          return late.stream().anyMatch(which -> which.test(request)) ? response.setBodyDelay(lateBy) : response;
        }
      };
    }

    /** The fixture's answers to {@code which} reach the client {@code by} late, what they did already done. */
    void answerLate(java.util.function.Predicate<RecordedRequest> which, Duration by) {
      lateBy = by;
      late.add(which);
    }

    void add(Function<RecordedRequest, MockResponse> rule) {
      rules.add(rule);
    }

    void clear() {
      rules.clear();
      late.clear();
    }
  }

  static String path(RecordedRequest request) {
    return request.getPath() == null ? "" : request.getPath();
  }

  static MockResponse status(int code, String reason) {
    return new MockResponse().setResponseCode(code).setHeader("Content-Type", "application/json")
        .setBody("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"" + reason
            + "\",\"code\":" + code + "}");
  }

  private void started(int shard, String identity) {
    String before = running.putIfAbsent(shard, identity);
    if (before != null) {
      overlaps.add("shard " + shard + " started in " + identity + " while running in " + before);
    }
  }

  private ShardedRunner replica(String identity, int shards) {
    ShardedRunner runner = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(identity).build())
        .shards(shards)
        .service(ShardService.of((shard, term) -> started(shard, identity), shard -> running.remove(shard, identity)))
        .start();
    runners.add(runner);
    return runner;
  }

  static String shardLease(int shard) {
    return MockApi.LEASE + "-shard-" + shard;
  }

  static String memberLease(String identity) {
    return MockApi.LEASE + "-member-" + identity;
  }

  /**
   * A shard Lease the list and watch showed released is taken with the first request, without a read (e576abb); the
   * transport then has no Lease it saw, and its write is the bare record: a PUT replaces the object, so the labels,
   * annotations and owner references a user put on the shard's Lease are gone, which the CHANGELOG promises a write
   * keeps ("a write keeps every field of the Lease as it was read").
   */
  @Test
  void takingAShardLeaseSeenReleasedKeepsItsMetadata() {
    Lease released = new LeaseBuilder()
        .withNewMetadata()
        .withName(shardLease(0))
        .withNamespace(MockApi.NAMESPACE)
        .addToLabels(ShardLeases.LABEL, MockApi.LEASE)
        .addToLabels("team", "orders")
        .addToAnnotations("example.com/owner", "orders-team")
        .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("Deployment")
            .withName("orders-controller").withUid("0f4d5b8e-1111-2222-3333-444455556666").build())
        .endMetadata()
        .withNewSpec()
        .withHolderIdentity("")
        .withLeaseDurationSeconds(1)
        .withLeaseTransitions(3)
        .endSpec()
        .build();
    api.client().leases().inNamespace(MockApi.NAMESPACE).resource(released).create();

    ShardedRunner a = replica("pod-a", 1);
    Await.until("pod-a owns shard 0", () -> a.ownedShards().containsKey(0), a::toString);

    Lease taken = api.fixture.lease(shardLease(0)).orElseThrow();
    assertThat(taken.getSpec().getHolderIdentity()).isEqualTo("pod-a");
    assertThat(taken.getMetadata().getLabels()).containsEntry("team", "orders")
        .containsEntry(ShardLeases.LABEL, MockApi.LEASE);
    assertThat(taken.getMetadata().getAnnotations()).containsEntry("example.com/owner", "orders-team");
    assertThat(taken.getMetadata().getOwnerReferences()).hasSize(1);
  }

  /**
   * A replica that leaves, and is handed a shard while its own last shard still stops (a hand-over written from a view
   * that did not show it leaving yet), declines it: a runner that only declines releases that term at once, a
   * compare-and-set on it, with no work started, so that the shard need not wait it out; and the replica releases its
   * membership Lease only after that runner stopped. The hand-over is written here by the test, naming the leaver's
   * latest membership version, as an old owner's would.
   */
  @Test
  void aLeavingReplicaDeclinesAHandOverToItWithNoWorkStarted() throws Exception {
    api.client().leases().inNamespace(MockApi.NAMESPACE).resource(new LeaseBuilder()
        .withNewMetadata().withName(shardLease(2)).withNamespace(MockApi.NAMESPACE)
        .addToLabels(ShardLeases.LABEL, MockApi.LEASE).endMetadata()
        .withNewSpec().withHolderIdentity("pod-x").withLeaseDurationSeconds(600).withLeaseTransitions(4)
        .withAcquireTime(java.time.ZonedDateTime.now()).withRenewTime(java.time.ZonedDateTime.now()).endSpec()
        .build()).create();
    CountDownLatch stopping = new CountDownLatch(1);
    CountDownLatch letStop = new CountDownLatch(1);
    List<Integer> startedShards = new CopyOnWriteArrayList<>();
    ShardedRunner b = replica("pod-b", 3, api.client(), ShardService.of((shard, term) -> startedShards.add(shard),
        shard -> {
          if (shard == 0) {
            stopping.countDown();
            try {
              letStop.await(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        }));
    // Started, not only owned: a shard's term is published before its start runs, and a leave's hand-over refuses a
    // start not begun by then (its stop then calls nothing: NoShardStartAfterItsHandOverTest).
    Await.until("pod-b owns shards 0 and 1 and started their work", () -> b.ownedShards().keySet()
        .equals(java.util.Set.of(0, 1)) && startedShards.containsAll(List.of(0, 1)), b::toString);
    Thread closing = new Thread(b::close, "closing pod-b");
    closing.start();
    assertThat(stopping.await(10, TimeUnit.SECONDS)).as("pod-b stops shard 0").isTrue();

    Lease member = api.fixture.lease(memberLease("pod-b")).orElseThrow();
    Lease held = api.fixture.lease(shardLease(2)).orElseThrow();
    held.getSpec().setHolderIdentity("pod-b");
    held.getSpec().setLeaseTransitions(5);
    held.getSpec().setLeaseDurationSeconds(2);
    held.getSpec().setAcquireTime(java.time.ZonedDateTime.now());
    held.getSpec().setRenewTime(java.time.ZonedDateTime.now());
    held.getMetadata().setAnnotations(Map.of(LeaseRecords.HAND_OVER_PROOF,
        member.getMetadata().getResourceVersion()));
    api.client().leases().inNamespace(MockApi.NAMESPACE).resource(held).update();

    Await.until("shard 2's hand-over released by pod-b", () -> api.fixture.lease(shardLease(2))
        .map(lease -> lease.getSpec().getHolderIdentity() == null || lease.getSpec().getHolderIdentity().isEmpty())
        .orElse(false), () -> String.valueOf(api.fixture.lease(shardLease(2)).orElse(null)));
    Lease released = api.fixture.lease(shardLease(2)).orElseThrow();
    assertThat(released.getSpec().getLeaseTransitions()).as("the hand-over's term, released").isEqualTo(5);
    assertThat(api.fixture.lease(memberLease("pod-b"))).as("the membership Lease: the leave is not done")
        .isPresent();
    letStop.countDown();
    closing.join(10_000);
    assertThat(b.isStopped()).isTrue();
    assertThat(startedShards).as("no work started for the declined shard").doesNotContain(2);
  }

  private ShardedRunner replica(String identity, int shards, io.fabric8.kubernetes.client.KubernetesClient client,
      ShardService service) {
    ShardedRunner runner = ShardedRunner.builder()
        .client(client)
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(identity).build())
        .shards(shards)
        .service(service)
        .start();
    runners.add(runner);
    return runner;
  }

  private ShardService tracked(String identity) {
    return ShardService.of((shard, term) -> started(shard, identity), shard -> running.remove(shard, identity));
  }

  /**
   * Sound: the survivor's list and watch of the controller's Leases is cut while the leaver hands its shards over
   * (from inside the leaver's stop, before its release): the survivor still ends owning every shard, no shard's work
   * ever running in both. (fabric8's mock server does not replay the events missed since the
   * watch's resourceVersion, as kube-apiserver does, so here the releases are seen only as the leaver's Leases
   * expiring in the view, a lease duration on; a 410 answered to the watch request itself is retried by fabric8 with
   * its backoff, without a new list, so it is no way to ask for a relist either.)
   */
  @Test
  void theSurvivorsWatchCutMidHandOverStillEndsWithEveryShardOwned() {
    ReplicaLink link = api.fixture.replica("pod-b");
    AtomicBoolean cut = new AtomicBoolean();
    AtomicBoolean closing = new AtomicBoolean();
    ShardedRunner b = replica("pod-b", 4, link.client(), tracked("pod-b"));
    ShardedRunner c = replica("pod-c", 4, api.client(), ShardService.of((shard, term) -> started(shard, "pod-c"),
        shard -> {
          if (closing.get() && cut.compareAndSet(false, true)) {
            link.refuseConnections(); // drops every connection of pod-b's, its watch among them
            link.heal();
          }
          running.remove(shard, "pod-c");
        }));
    Await.until("two shards each", () -> b.ownedShards().size() == 2 && c.ownedShards().size() == 2
        && running.size() == 4, Duration.ofSeconds(15), () -> b + " " + c);

    closing.set(true);
    c.close();

    // Not asserted: when its informer watches again (the JDK client may take a while to see the cut connection).
    Await.until("pod-b owns every shard", () -> b.ownedShards().size() == 4 && running.size() == 4,
        Duration.ofSeconds(15), () -> b + " running " + running);
    assertThat(cut).as("pod-b's connections were cut mid-hand-over").isTrue();
    assertThat(overlaps).isEmpty();
    assertThat(b.failure()).isEmpty();
    assertThat(b.health().ready()).isTrue();
  }

  /**
   * A hand-over whose proof is a membership write of the successor's that the server stored, and the old owner saw,
   * before the successor had its answer: taken in once that answer comes, not waited out as another process's term (a
   * lease duration, then a take of the next term). Every renewal of the joiner's membership Lease is answered 150 ms
   * late, of a retry period of 200 ms, so most of the old owner's views show it a version the joiner has not heard back
   * about. Red before the runners holding such a hand-over were told of each answer (review h-decline's suspicion 2):
   * they looked again only at their next wake, a lease duration on, past the proof's renew deadline.
   */
  @Test
  void aHandOverNamingAMembershipWriteNotYetAnsweredIsTakenInOnceItIs() {
    ShardedRunner a = replica("pod-a", 4);
    Await.until("pod-a owns every shard", () -> a.ownedShards().size() == 4, Duration.ofSeconds(15), a::toString);
    Map<Integer, Integer> before = new java.util.TreeMap<>();
    a.ownedShards().forEach((shard, term) -> before.put(shard, term.leaseTransitions()));
    faults.answerLate(request -> "PUT".equals(request.getMethod())
        && path(request).contains(memberLease("pod-b")), Duration.ofMillis(150));

    ShardedRunner b = replica("pod-b", 4);
    Await.until("two shards each", () -> a.ownedShards().size() == 2 && b.ownedShards().size() == 2,
        Duration.ofSeconds(15), () -> a + " " + b);
    Map<Integer, String> tokens = new java.util.TreeMap<>();
    b.ownedShards().forEach((shard, term) -> tokens.put(shard, before.get(shard) + " -> " + term.leaseTransitions()));
    Map<Integer, String> handedOver = new java.util.TreeMap<>();
    b.ownedShards().forEach((shard, term) -> handedOver.put(shard, before.get(shard) + " -> " + (before.get(shard) + 1)));
    assertThat(tokens).as("each moved shard's token: the hand-over's (one on), not a take after it expired (two on)")
        .isEqualTo(handedOver);
    assertThat(overlaps).isEmpty();
  }

  /**
   * Sound: the delete of a closed replica's membership Lease fails (500): close() returns, the Lease stays released
   * with its leaving mark, the survivor takes every shard; a replica started again under the same identity takes
   * that Lease back, unmarked, gets its share, and its own close deletes the Lease.
   */
  @Test
  void aFailedMembershipDeleteLeavesTheLeaseReleasedAndTheSameIdentityJoinsAgain() {
    AtomicBoolean failDeletes = new AtomicBoolean(true);
    AtomicInteger deletes = new AtomicInteger();
    faults.add(request -> {
      if ("DELETE".equals(request.getMethod()) && path(request).contains(memberLease("pod-c"))) {
        deletes.incrementAndGet();
        return failDeletes.get() ? status(500, "InternalError") : null;
      }
      return null;
    });
    ShardedRunner b = replica("pod-b", 4);
    ShardedRunner c = replica("pod-c", 4);
    Await.until("two shards each", () -> b.ownedShards().size() == 2 && c.ownedShards().size() == 2,
        Duration.ofSeconds(15), () -> b + " " + c);

    c.close();
    assertThat(deletes.get()).as("deletes sent by the close").isEqualTo(1);
    Lease left = api.fixture.lease(memberLease("pod-c")).orElseThrow();
    assertThat(left.getSpec().getHolderIdentity()).as("released").isNullOrEmpty();
    assertThat(left.getMetadata().getAnnotations()).containsEntry(ShardLeases.LEAVING, "true");
    Await.until("pod-b owns every shard", () -> b.ownedShards().size() == 4, Duration.ofSeconds(10), b::toString);

    failDeletes.set(false);
    ShardedRunner again = replica("pod-c", 4);
    Await.until("two shards each again", () -> b.ownedShards().size() == 2 && again.ownedShards().size() == 2
        && running.size() == 4, Duration.ofSeconds(15), () -> b + " " + again);
    Lease taken = api.fixture.lease(memberLease("pod-c")).orElseThrow();
    assertThat(taken.getSpec().getHolderIdentity()).isEqualTo("pod-c");
    assertThat(taken.getMetadata().getAnnotations()).containsEntry(ShardLeases.LEAVING, "false");
    again.close();
    assertThat(api.fixture.lease(memberLease("pod-c"))).as("deleted by the second close").isEmpty();
    assertThat(overlaps).isEmpty();
  }

  /**
   * Sound: on a loop and pools that many shards share, one shard's stop() hangs past the stop timeout while its
   * replica closes: its other shard moves to the survivor at once, close() returns once the stop timeout ran out
   * (the replica gave up and says why), the membership Lease is released and deleted, and the hung shard is taken
   * only once its Lease expired: never before its stop timeout.
   */
  @Test
  void aStopThatHangsPastTheStopTimeoutHoldsUpNeitherTheOtherShardNorClose() throws InterruptedException {
    CountDownLatch unhang = new CountDownLatch(1);
    AtomicBoolean closing = new AtomicBoolean();
    AtomicInteger hung = new AtomicInteger(-1);
    AtomicLong hungSince = new AtomicLong();
    Map<Integer, Long> takenAt = new ConcurrentHashMap<>();
    ShardedRunner a = replica("pod-a", 4, api.client(), ShardService.of((shard, term) -> { }, shard -> {
      if (closing.get() && hung.compareAndSet(-1, shard)) {
        hungSince.set(System.nanoTime());
        try {
          unhang.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }));
    ShardedRunner b = replica("pod-b", 4, api.client(), ShardService.of(
        (shard, term) -> takenAt.putIfAbsent(shard, System.nanoTime()), shard -> { }));
    try {
      Await.until("two shards each", () -> a.ownedShards().size() == 2 && b.ownedShards().size() == 2,
          Duration.ofSeconds(15), () -> a + " " + b);
      List<Integer> as = new ArrayList<>(a.ownedShards().keySet());
      as.forEach(takenAt::remove); // pod-b's first starts of pod-a's shards from now on

      closing.set(true);
      long closeBegan = System.nanoTime();
      Thread closer = new Thread(a::close, "closer");
      closer.start();
      Await.until("a stop hangs", () -> hung.get() >= 0, Duration.ofSeconds(10), a::toString);
      int other = as.get(0) == hung.get() ? as.get(1) : as.get(0);
      Await.until("pod-b owns pod-a's shard whose stop returned", () -> takenAt.containsKey(other),
          Duration.ofSeconds(10), () -> b + ", hung " + hung);
      closer.join(MockApi.LEASE_DURATION.multipliedBy(5).toMillis());
      assertThat(closer.isAlive()).as("close() returned: " + a).isFalse();
      assertThat(Duration.ofNanos(System.nanoTime() - closeBegan)).as("close() waited out the stop timeout")
          .isGreaterThanOrEqualTo(MockApi.fastSettings("x").build().stopTimeout());
      assertThat(a.failure()).get().asString().contains("stop");
      assertThat(api.fixture.lease(memberLease("pod-a"))).as("pod-a's membership Lease, deleted").isEmpty();

      Await.until("pod-b started the hung shard", () -> takenAt.containsKey(hung.get()), Duration.ofSeconds(10),
          b::toString);
      assertThat(Duration.ofNanos(takenAt.get(hung.get()) - hungSince.get()))
          .as("from the hung stop's call to pod-b's start of that shard")
          .isGreaterThanOrEqualTo(MockApi.fastSettings("x").build().stopTimeout());
    } finally {
      unhang.countDown();
    }
  }

  /**
   * Sound: the first list of the controller's Leases fails once (a 503, as from an API server that restarts while the
   * pod starts): the list and watch lists again after its back-off (a 32nd of the retry period; its client of its own
   * makes no request retries of the user's client), and the replica owns its shards.
   */
  @Test
  void aFirstListThatFailsOnceIsRetriedAndTheReplicaOwnsItsShards() {
    AtomicInteger failures = new AtomicInteger(1);
    faults.add(request -> isShardsList(request) && failures.getAndUpdate(n -> Math.max(0, n - 1)) > 0
        ? status(503, "ServiceUnavailable") : null);
    ShardedRunner a = replica("pod-a", 2);

    Await.until("pod-a owns both shards", () -> a.ownedShards().size() == 2, Duration.ofSeconds(20),
        () -> a + ", health " + a.health() + ", failed lists left " + failures);
    assertThat(failures.get()).as("the failed list was answered").isZero();
    assertThat(a.health().ready()).isTrue();
  }

  private static boolean isShardsList(RecordedRequest request) {
    return "GET".equals(request.getMethod()) && path(request).contains("labelSelector")
        && !path(request).contains("watch=true");
  }

  /**
   * A watch event the list and watch cannot read (here a labelled Lease with a field of the wrong type, which only a
   * mock server stores; on a real one, any watch error but a 410 Gone: a response cut mid-event, an object the
   * client's model cannot take) ends fabric8's informer for good: its default exception handler stops it on every
   * watch error but a 410, and nothing started it again. The replica's view then never changes; judged on its own
   * clock every other replica's Leases expire in it, so it counts itself the only member and never hands a surplus
   * shard to a replica that joins: fair share is never reached (and it stays ready).
   */
  @Test
  void aListAndWatchEndedByAWatchErrorIsStartedAgainAndFairShareIsReached() {
    ShardedRunner a = replica("pod-a", 4);
    Await.until("pod-a owns every shard", () -> a.ownedShards().size() == 4 && running.size() == 4,
        Duration.ofSeconds(15), a::toString);

    var leases = api.client().genericKubernetesResources("coordination.k8s.io/v1", "Lease")
        .inNamespace(MockApi.NAMESPACE);
    var unreadable = new io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder()
        .withApiVersion("coordination.k8s.io/v1").withKind("Lease")
        .withNewMetadata().withName(MockApi.LEASE + "-unreadable").withNamespace(MockApi.NAMESPACE)
        .addToLabels(ShardLeases.LABEL, MockApi.LEASE).endMetadata()
        .addToAdditionalProperties("spec", Map.of("leaseDurationSeconds", "fifteen"))
        .build();
    try {
      leases.resource(unreadable).create();
    } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
      // 409: the client's retry of a create the server had made (its answer waited on the watch events it sent)
      assertThat(e.getCode()).as(e.toString()).isEqualTo(409);
    }
    // Its delete's answer may wait, as the create's, on the mock server's send to the watch the informer closed.
    Await.until("the unreadable Lease deleted", () -> {
      try {
        leases.withName(MockApi.LEASE + "-unreadable").delete();
      } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
        // retried
      }
      return leases.withName(MockApi.LEASE + "-unreadable").get() == null;
    }, Duration.ofSeconds(30), () -> "");

    ShardedRunner b = replica("pod-b", 4);
    Await.until("two shards each", () -> a.ownedShards().size() == 2 && b.ownedShards().size() == 2
        && running.size() == 4, Duration.ofSeconds(30), () -> a + " " + b + ", pod-a " + a.health());
    assertThat(overlaps).isEmpty();
  }

  /**
   * Sound: the renewal of the leaver's membership Lease that carries its leaving mark is answered {@code code} (the
   * first write of that Lease after close() began): the hold of its hand-overs ends at its bound or at the next
   * renewal, and the survivor still ends owning every shard, with no overlap; close() returns.
   */
  private void aLeavingMarksRenewalAnswered(int code, String reason) {
    AtomicBoolean closing = new AtomicBoolean();
    AtomicInteger answered = new AtomicInteger();
    faults.add(request -> "PUT".equals(request.getMethod()) && path(request).endsWith(memberLease("pod-c"))
        && closing.get() && answered.getAndIncrement() == 0 ? status(code, reason) : null);
    ShardedRunner b = replica("pod-b", 4);
    ShardedRunner c = replica("pod-c", 4);
    Await.until("two shards each", () -> b.ownedShards().size() == 2 && c.ownedShards().size() == 2
        && running.size() == 4, Duration.ofSeconds(15), () -> b + " " + c);

    closing.set(true);
    c.close();

    assertThat(answered.get()).as("membership writes after close() began").isPositive();
    Await.until("pod-b owns every shard", () -> b.ownedShards().size() == 4 && running.size() == 4,
        Duration.ofSeconds(15), () -> b + " running " + running);
    assertThat(overlaps).isEmpty();
    assertThat(c.isStopped()).isTrue();
  }

  @Test
  void aLeavingMarksRenewalAnsweredWithAServerErrorStillHandsOver() {
    aLeavingMarksRenewalAnswered(500, "InternalError");
  }

  @Test
  void aLeavingMarksRenewalAnsweredWithAConflictStillHandsOver() {
    aLeavingMarksRenewalAnswered(409, "Conflict");
  }

  /**
   * Sound: a replica is cut off from the API server (a hung node) and started again elsewhere under the same identity
   * (a StatefulSet's pod name) while its old membership and shard Leases still name it: the new process waits for
   * them to expire (they name its identity, but it wrote none of them), gets its share, and the old process, back in
   * touch, finds its Leases held under its own identity by another process and takes none: no shard's work ever runs
   * in two processes, nor in the old one once its terms lapsed.
   */
  @Test
  void aReplicaStartedAgainUnderTheSameIdentityWhileTheOldOneIsCutOffNeverOverlapsIt() {
    ReplicaLink oldLink = api.fixture.replica("pod-c-old");
    ShardedRunner b = replica("pod-b", 4);
    ShardedRunner old = replica("pod-c", 4, oldLink.client(), tracked("pod-c#old"));
    Await.until("two shards each", () -> b.ownedShards().size() == 2 && old.ownedShards().size() == 2
        && running.size() == 4, Duration.ofSeconds(15), () -> b + " " + old);

    oldLink.partition();
    Await.until("the old process's work stopped", () -> !running.containsValue("pod-c#old"),
        Duration.ofSeconds(15), () -> "running " + running);
    ShardedRunner again = replica("pod-c", 4, api.client(), tracked("pod-c#new"));
    Await.until("two shards each again", () -> b.ownedShards().size() == 2 && again.ownedShards().size() == 2
        && running.size() == 4 && running.containsValue("pod-c#new"), Duration.ofSeconds(30),
        () -> b + " " + again + " running " + running);

    oldLink.heal();
    int before = oldLink.requestCount();
    // The old process's own evidence that it is back: requests of its runners answered again (a follower with a
    // watch open reads only now and then).
    Await.until("the old process back in touch", () -> oldLink.requestCount() >= before + 3,
        Duration.ofSeconds(30), () -> old + " " + old.health() + " stopped " + old.isStopped() + " " + old.failure()
            + ", requests " + oldLink.requestCount() + " from " + before);
    assertThat(old.ownedShards()).as("the old process, back in touch").isEmpty();
    assertThat(running).doesNotContainValue("pod-c#old");
    assertThat(overlaps).isEmpty();
  }
}
