package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.Optional;
import java.util.SortedMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sharded runner and the user's code around it: listeners that close their replica, a shard's start that closes
 * the replica or throws an Error, stops that throw while running unelected, a close with the API server gone, and
 * Leases deleted or overwritten by someone else. Each test guards a promise of the runner's Javadoc or
 * docs/sharding.md that an adversarial review (h-attack11) found broken, fixed with the test.
 */
class ShardedRunnerCallbacksTest {

  @RegisterExtension
  final MockApi api = new MockApi();

  private final List<ShardedRunner> runners = new ArrayList<>();
  private final Map<Integer, String> running = new ConcurrentHashMap<>();
  private final List<String> overlaps = new CopyOnWriteArrayList<>();

  @AfterEach
  void closeAll() {
    runners.forEach(ShardedRunner::close);
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

  private String holder(String lease) {
    return api.fixture.lease(lease).map(l -> l.getSpec().getHolderIdentity()).orElse(null);
  }

  private boolean twoEach(ShardedRunner b, ShardedRunner c) {
    return b.ownedShards().size() == 2 && c.ownedShards().size() == 2 && running.size() == 4;
  }

  /**
   * Sound: someone else deletes a member's membership Lease, deletes the Lease of a shard the other member owns and
   * writes a foreign holder into another of its shards: the members give up what they lost, take the Leases again
   * once they may, and end with two shards each, no shard's work ever running in both.
   */
  @Test
  void membershipAndShardLeasesDeletedOrOverwrittenBySomeoneElseAreTakenBackWithoutOverlap() {
    ShardedRunner b = replica("pod-b", 4);
    ShardedRunner c = replica("pod-c", 4);
    Await.until("two shards each", () -> twoEach(b, c), Duration.ofSeconds(15), () -> b + " " + c);
    List<Integer> cs = new ArrayList<>(c.ownedShards().keySet());

    api.client().leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE + "-member-pod-b").delete();
    api.client().leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE + "-shard-" + cs.get(0)).delete();
    api.fixture.overwriteHolder(MockApi.LEASE + "-shard-" + cs.get(1), "thief");

    Await.until("a shard given up", () -> !twoEach(b, c), Duration.ofSeconds(10), () -> b + " " + c);
    // Settled, not only two each: c may retake the deleted shard before it or b has seen the other two changes (each
    // is noticed at its runner's next renewal), and two each then holds for a moment with pod-b's Lease still gone.
    Await.until("two shards each again, pod-b a member again and no shard the thief's", () -> twoEach(b, c)
        && "pod-b".equals(holder(MockApi.LEASE + "-member-pod-b")) && !"thief".equals(holder(MockApi.LEASE
        + "-shard-" + cs.get(1))), Duration.ofSeconds(30), () -> b + " " + c + " running " + running + " member "
        + holder(MockApi.LEASE + "-member-pod-b") + " shard " + cs.get(1) + " " + holder(MockApi.LEASE + "-shard-"
        + cs.get(1)));
    assertThat(overlaps).isEmpty();
    assertThat(b.failure()).isEmpty();
    assertThat(c.failure()).isEmpty();
    assertThat(b.health().live() && c.health().live()).isTrue();
  }

  /**
   * Sound: with the API server gone, a member's close() still returns within a few lease durations (the leaving
   * mark's renewal is never answered, so the hold ends at its bound; each release fails at its deadline).
   */
  @Test
  void closeWithTheApiServerGoneIsBounded() throws InterruptedException {
    ShardedRunner a = replica("pod-a", 2);
    Await.until("both shards owned", () -> a.ownedShards().size() == 2 && running.size() == 2, a::toString);
    api.fixture.stopServer();
    long began = System.nanoTime();
    Thread closer = new Thread(a::close, "closer");
    closer.start();
    closer.join(MockApi.LEASE_DURATION.multipliedBy(5).toMillis());
    Duration took = Duration.ofNanos(System.nanoTime() - began);
    assertThat(closer.isAlive()).as("close() still running after " + took + ": " + a).isFalse();
    assertThat(a.isStopped()).isTrue();
    assertThat(running).as("shards whose work still runs").isEmpty();
  }

  /**
   * Sound: a ShardListener that closes its replica from ownedShardsChanged (re-entrantly, on the listener thread)
   * gets its close() back once the replica stopped, and then hears the stop once.
   */
  @Test
  void aListenerThatClosesItsReplicaHearsTheStop() throws InterruptedException {
    AtomicReference<ShardedRunner> self = new AtomicReference<>();
    CountDownLatch built = new CountDownLatch(1);
    CountDownLatch closed = new CountDownLatch(1);
    List<Optional<Throwable>> stops = new CopyOnWriteArrayList<>();
    ShardedRunner a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").build())
        .shards(2)
        .service(ShardService.of((shard, term) -> started(shard, "pod-a"), shard -> running.remove(shard, "pod-a")))
        .listener(new ShardListener() {
          @Override
          public void ownedShardsChanged(SortedMap<Integer, LeadershipTerm> owned) {
            try {
              if (owned.size() == 2 && built.await(10, TimeUnit.SECONDS)) {
                self.get().close();
                closed.countDown();
              }
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }

          @Override
          public void stopped(Optional<Throwable> failure) {
            stops.add(failure);
          }
        })
        .start();
    self.set(a);
    built.countDown();
    runners.add(a);
    assertThat(closed.await(15, TimeUnit.SECONDS)).as("close() from the listener returned: " + a).isTrue();
    assertThat(a.isStopped()).isTrue();
    Await.until("the stop heard", () -> !stops.isEmpty(), stops::toString);
    assertThat(stops).containsExactly(Optional.empty());
    assertThat(running).isEmpty();
  }

  /**
   * Running unelected, AllShards.stop lost what the shards' stops threw. A stop that throws one instance for every
   * shard (a cached exception, one shared cause) had it suppressed by itself: {@code addSuppressed} threw
   * "Self-suppression not permitted". And a first failure that was no Exception nor Error (a raw Throwable, from a sneaky throw as
   * Lombok's or Kotlin's code may do) was cast to Error: a ClassCastException. Either way the runner logged and
   * reported the library's exception instead of the user's.
   */
  @Test
  void runningUnelectedAStopThatThrowsARawThrowableIsReportedAsThrown() throws Exception {
    Throwable raw = new Throwable("a raw throwable from stop()");
    ShardAssembly.AllShards all = new ShardAssembly.AllShards(2, ShardService.of((shard, term) -> { },
        shard -> ShardedRunnerCallbacksTest.<RuntimeException>sneaky(raw)), owned -> { });
    all.start(LeadershipTerm.unelected("x", java.time.Instant.EPOCH, Ticker.system()));
    Throwable thrown = null;
    try {
      all.stop();
    } catch (Throwable e) {
      thrown = e;
    }
    assertThat(thrown).isSameAs(raw);
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneaky(Throwable e) throws T {
    throw (T) e;
  }

  /**
   * Sound: a shard's start() that closes its own replica (re-entrantly, from the runner's callback thread) returns at
   * once, and the replica stops, with every shard's work stopped and nothing owned.
   */
  @Test
  void aCloseFromAShardsStartReturnsAndTheReplicaStops() throws InterruptedException {
    AtomicReference<ShardedRunner> self = new AtomicReference<>();
    CountDownLatch built = new CountDownLatch(1);
    CountDownLatch closeReturned = new CountDownLatch(1);
    ShardedRunner a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").build())
        .shards(2)
        .service(ShardService.of((shard, term) -> {
          started(shard, "pod-a");
          try {
            if (built.await(10, TimeUnit.SECONDS)) {
              self.get().close();
              closeReturned.countDown();
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }, shard -> running.remove(shard, "pod-a")))
        .start();
    self.set(a);
    built.countDown();
    runners.add(a);
    assertThat(closeReturned.await(10, TimeUnit.SECONDS)).as("close() from start() returned").isTrue();
    assertThat(a.awaitStopped(Duration.ofSeconds(10))).as("stopped").isTrue();
    assertThat(a.ownedShards()).isEmpty();
    assertThat(running).as("shards whose work still runs").isEmpty();
    assertThat(a.failure()).isEmpty();
  }

  /**
   * Sound: an Error thrown by a shard's start() gives that shard up as a loss would (its stop() is not called), the
   * replica takes it again, and no shard's work ever runs twice.
   */
  @Test
  void anErrorFromAShardsStartGivesTheShardUpAndItIsTakenAgain() {
    AtomicInteger throwsLeft = new AtomicInteger(1);
    AtomicInteger stopsWithoutStart = new AtomicInteger();
    ShardedRunner a = ShardedRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("pod-a").build())
        .shards(2)
        .service(ShardService.of((shard, term) -> {
          if (shard == 0 && throwsLeft.getAndDecrement() > 0) {
            throw new AssertionError("shard 0's start failed");
          }
          started(shard, "pod-a");
        }, shard -> {
          if (running.remove(shard) == null) {
            stopsWithoutStart.incrementAndGet();
          }
        }))
        .start();
    runners.add(a);
    Await.until("both shards owned after shard 0's failed start", () -> a.ownedShards().size() == 2
        && running.size() == 2, Duration.ofSeconds(15), () -> a + " running " + running);
    assertThat(throwsLeft.get()).isNegative();
    assertThat(a.failure()).isEmpty();
    assertThat(a.health().live()).isTrue();
    a.close();
    assertThat(running).isEmpty();
    assertThat(stopsWithoutStart.get()).as("stop() calls for a shard whose start threw").isZero();
    assertThat(overlaps).isEmpty();
  }

  /**
   * ShardListener promises a call after each change of the owned shards "with the set as ownedShards() then showed
   * it", and {@code stopped} once after the replica stopped. Running unelected, the replica owns every shard at once
   * (ownedShards() shows them all), but ShardAssembly's unelected path never handed the builder's listeners to
   * anything: a metrics gauge or a log built on a ShardListener saw nothing, neither the shards nor the stop, on a
   * developer's machine or with election off.
   */
  @Test
  void runningUnelectedTellsTheListenersOfTheShardsAndTheStop() {
    List<SortedMap<Integer, LeadershipTerm>> told = new CopyOnWriteArrayList<>();
    List<Optional<Throwable>> stops = new CopyOnWriteArrayList<>();
    ShardedRunner runner = ShardedRunner.builder()
        .decision(MockApi.RUN_UNELECTED)
        .shards(4)
        .service(ShardService.of((shard, term) -> { }, shard -> { }))
        .listener(new ShardListener() {
          @Override
          public void ownedShardsChanged(SortedMap<Integer, LeadershipTerm> owned) {
            told.add(owned);
          }

          @Override
          public void stopped(Optional<Throwable> failure) {
            stops.add(failure);
          }
        })
        .start();
    try {
      assertThat(runner.ownedShards()).hasSize(4);
      Await.until("the listener told of the 4 shards", () -> !told.isEmpty() && told.get(told.size() - 1).size() == 4,
          told::toString);
      assertThat(told.get(told.size() - 1)).isEqualTo(runner.ownedShards());
    } finally {
      runner.close();
    }
    Await.until("the listener told of the stop", () -> !stops.isEmpty(), stops::toString);
    assertThat(stops).containsExactly(Optional.empty());
    assertThat(told.get(told.size() - 1)).as("the last set told").isEmpty();
  }
}
