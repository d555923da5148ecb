package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.github.electionpolicy.testkit.fabric8.ApiServerTarget;
import io.github.electionpolicy.testkit.fabric8.LeaseApi;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * Three replica slots against one embedded Lease API ({@code election-testkit-fabric8}), which records every
 * accepted Lease write on the server's side. Each incarnation of a replica has its own client behind its own
 * {@link ReplicaLink}, so it can be cut off alone; an observer replica whose link is never cut plays the
 * foreign writer. Not thread-safe: one soak drives it from one thread.
 */
final class SoakCluster implements AutoCloseable {

  static final int REPLICAS = 3;
  static final Duration STABLE_TIMEOUT = Duration.ofSeconds(10);
  /**
   * How recent every replica's last successful Lease call must be for the cluster to count as stable: two
   * retry periods and a little, so a replica just reconnected has talked to the server again.
   */
  static final Duration FRESH = MockApi.RETRY_PERIOD.multipliedBy(2).plusMillis(100);

  /** One replica position; each start is a new incarnation with a new identity, client and proxy. */
  static final class Slot {
    final String name;
    int generation;
    String identity;
    ReplicaLink link;
    KubernetesClient client;
    ElectionRunner runner;
    long cutSinceNanos = -1;
    long stableNanos = -1;

    Slot(String name) {
      this.name = name;
    }

    ElectionState state() {
      return runner.state();
    }
  }

  final ServiceLog log = new ServiceLog();
  final SoakJournal journal = new SoakJournal();
  private final LeaseApi api;
  private final KubernetesClient observer;
  private final List<Slot> slots = new ArrayList<>();
  private int foreignWrites;

  SoakCluster() {
    api = LeaseApi.builder().namespace(MockApi.NAMESPACE).target(ApiServerTarget.embedded()).start();
    observer = api.replica("observer").client();
    for (int i = 1; i <= REPLICAS; i++) {
      slots.add(new Slot("r" + i));
    }
  }

  List<LeaseWrite> writes() {
    return api.leaseWrites(MockApi.LEASE);
  }

  List<Slot> slots() {
    return List.copyOf(slots);
  }

  /** Starts a new incarnation in an empty slot. */
  void start(Slot slot) {
    slot.generation++;
    slot.identity = slot.name + "-" + slot.generation;
    slot.link = api.replica(slot.identity);
    slot.client = slot.link.client();
    slot.cutSinceNanos = -1;
    slot.stableNanos = -1;
    slot.runner = ElectionRunner.builder()
        .client(slot.client)
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings(slot.identity).build())
        .service(log.service(slot.identity))
        .rbacPreflight(false)
        .start();
    journal.trace("started " + slot.identity);
  }

  /** Closes the incarnation the way a controller's shutdown hook would. */
  void closeGracefully(Slot slot) {
    boolean wasRunning = log.running().contains(slot.identity);
    long start = System.nanoTime();
    slot.runner.close();
    long end = System.nanoTime();
    sample(slot, "right after close of " + slot.identity, false);
    journal.closed(new SoakJournal.GracefulClose(slot.identity, wasRunning, start, end));
    discard(slot);
  }

  /**
   * Kills the incarnation: its connections drop and every new one is refused first, so nothing it still
   * tries (a release included) reaches the server; then its threads are ended. Its reconcilers stop at
   * once, as a dead process's would.
   */
  void crash(Slot slot) {
    slot.link.refuseConnections();
    journal.trace("crashed " + slot.identity + " (connections dropped, no release)");
    slot.runner.close();
    discard(slot);
  }

  private void discard(Slot slot) {
    slot.link.close();
    slot.runner = null;
    slot.client = null;
    slot.link = null;
  }

  /** Cuts one replica off: its requests hang ({@code hang}) or its connections are refused. */
  void cut(Slot slot, boolean hang) {
    if (hang) {
      slot.link.partition();
    } else {
      slot.link.refuseConnections();
    }
    slot.cutSinceNanos = System.nanoTime();
    journal.trace("cut " + slot.identity + (hang ? " (requests hang)" : " (connections refused)"));
  }

  void heal(Slot slot) {
    slot.link.heal();
    slot.cutSinceNanos = -1;
    journal.trace("healed " + slot.identity);
  }

  List<Slot> up() {
    return slots.stream().filter(s -> s.runner != null).collect(Collectors.toList());
  }

  /**
   * Updates the Lease as someone else would, keeping its holder: an annotation, and optionally renewTime.
   * A write that conflicts with a replica's is read again and retried.
   *
   * @return how many writes the server accepted
   */
  int foreignWrite(int count, boolean touchRenewTime, Duration spacing) throws InterruptedException {
    int accepted = 0;
    for (int i = 0; i < count; i++) {
      for (int attempt = 0; attempt < 5; attempt++) {
        Lease current = observer.leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE).get();
        if (current == null) {
          return accepted;
        }
        LeaseBuilder bumped = new LeaseBuilder(current).editMetadata()
            .addToAnnotations("soak.electionpolicy.io/foreign-write", Integer.toString(++foreignWrites))
            .endMetadata();
        if (touchRenewTime) {
          bumped.editSpec().withRenewTime(ZonedDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.MICROS))
              .endSpec();
        }
        try {
          Lease written = observer.leases().inNamespace(MockApi.NAMESPACE).resource(bumped.build()).update();
          accepted++;
          journal.trace("foreign write, holder kept " + written.getSpec().getHolderIdentity()
              + ", resourceVersion " + written.getMetadata().getResourceVersion()
              + (touchRenewTime ? ", renewTime moved" : ""));
          break;
        } catch (KubernetesClientException e) {
          if (e.getCode() != 409) {
            throw e;
          }
        }
      }
      // Must wait: the soak runs in real time by design (docs/reliability.md); this is the foreign writer's spacing.
      Thread.sleep(spacing.toMillis());
    }
    return accepted;
  }

  Lease lease() {
    return observer.leases().inNamespace(MockApi.NAMESPACE).withName(MockApi.LEASE).get();
  }

  /** Records the health of every running replica with what the soak knows about its link. */
  void sampleAll(String label, boolean stablePoint) {
    for (Slot slot : up()) {
      sample(slot, label, stablePoint);
    }
  }

  private void sample(Slot slot, String label, boolean stablePoint) {
    long now = System.nanoTime();
    ElectionHealth health = slot.runner.health();
    long cutFor = slot.cutSinceNanos < 0 ? -1 : now - slot.cutSinceNanos;
    long sinceStable = slot.stableNanos < 0 ? -1 : now - slot.stableNanos;
    journal.sample(new SoakJournal.HealthSample(slot.identity, label, now, health, cutFor, sinceStable,
        stablePoint));
  }

  /**
   * Waits until exactly one replica leads, only its reconcilers run, every other replica follows it by name,
   * and every replica is ready and live with a fresh Lease call (see {@link #stableLeader}); then samples
   * health there. Records the failure when that does not
   * happen within {@link #STABLE_TIMEOUT}.
   */
  Optional<Slot> awaitStable(String after) throws InterruptedException {
    long waitFrom = System.nanoTime();
    Optional<Slot> leader = Await.present(() -> stableLeader(waitFrom), STABLE_TIMEOUT);
    if (leader.isPresent()) {
      long now = System.nanoTime();
      // Dated so that each replica's last success lies within FRESH before it, as the health checks assume:
      // a watching follower's may be older than FRESH at the stable point itself.
      up().forEach(slot -> slot.stableNanos = now - Math.max(0, slot.runner.health().sinceLastLeaseSuccess()
          .map(Duration::toNanos).orElse(0L) - FRESH.toNanos()));
      sampleAll("stable after " + after, true);
      journal.trace("stable: " + leader.get().identity + " leads, "
          + up().stream().filter(s -> s != leader.get()).map(s -> s.identity).collect(Collectors.joining(", "))
          + " follow");
      return leader;
    }
    journal.unrecovered(new SoakJournal.Unrecovered(after, up().stream()
        .map(s -> s.identity + "=" + s.runner.health()).collect(Collectors.joining("; "))
        + "; reconcilers running: " + log.running()));
    return Optional.empty();
  }

  /**
   * The one leader, if the cluster is stable: see {@link #awaitStable}. "Fresh" means a successful Lease call
   * sent at most {@link #FRESH} before the wait began, or since: a follower with an open watch reads only
   * once per lease duration, so two of them are rarely fresh within {@code FRESH} of the same instant.
   */
  private Optional<Slot> stableLeader(long waitFrom) {
    List<Slot> up = up();
    List<Slot> leading = up.stream().filter(s -> s.state().kind() == ElectionState.Kind.LEADING)
        .collect(Collectors.toList());
    if (leading.size() != 1 || !log.running().equals(List.of(leading.get(0).identity))) {
      return Optional.empty();
    }
    Slot leader = leading.get(0);
    ElectionState following = new ElectionState.Following(Optional.of(leader.identity));
    for (Slot slot : up) {
      ElectionHealth health = slot.runner.health();
      Duration window = FRESH.plusNanos(System.nanoTime() - waitFrom);
      boolean fresh = health.sinceLastLeaseSuccess().map(since -> since.compareTo(window) <= 0).orElse(false);
      if ((slot != leader && !slot.state().equals(following)) || !health.ready() || !health.live() || !fresh) {
        return Optional.empty();
      }
    }
    return Optional.of(leader);
  }

  @Override
  public void close() {
    for (Slot slot : slots) {
      if (slot.runner != null) {
        slot.link.heal();
        slot.runner.close();
        discard(slot);
      }
    }
    api.close();
  }
}
