package io.github.electionpolicy.micrometer;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The meters of one started runner, and the registries that hold them.
 *
 * <p>Micrometer keeps one meter per name and tags in a registry, so the binders of one Lease (with the same
 * extra tags) share one slot per registry. Who holds it is decided here, under one lock for every binder in
 * the JVM, by these rules:
 *
 * <ul>
 *   <li>a closed runner's meters leave every registry (a stopped runner never runs again, and the series of a
 *       process that closed it on purpose must not linger, nor keep the runner alive);</li>
 *   <li>a runner that stopped on its own keeps its meters, which then say what is true (not leading, the age
 *       of the last success growing), until a running runner's binder takes the slot: that one is its
 *       replacement, and the stopped runner's meters then leave every registry;</li>
 *   <li>of two running runners the first keeps the slot; the second logs a WARN and takes the slot once the
 *       first has stopped;</li>
 *   <li>meters not registered by a binder are never removed or taken over.</li>
 * </ul>
 *
 * <p>Once the runner stopped, nothing here refers to it: what the meters still show is copied first.
 */
final class ElectionMeters {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionMetrics.class);
  private static final double NANOS_PER_SECOND = 1e9;
  /** The names of the meters, to tell this runner's from others among what a registry holds. */
  private static final Set<String> NAMES = Set.of(ElectionMetrics.MASTER_STATUS, ElectionMetrics.TRANSITIONS,
      ElectionMetrics.RENEW_FAILURES, ElectionMetrics.RENEW_DURATION, ElectionMetrics.LAST_SUCCESS_AGE,
      ElectionMetrics.DECISION);

  /** Guards every instance's registrations and waits, and {@link #LIVE}: one lock for all binders. */
  private static final Object LOCK = new Object();
  /**
   * The instances that may hold or wait for a slot, to find who holds the meters a registry returned and who
   * waits for a registry. Weak: an instance whose binder nobody refers to any more, whose runner has ended
   * and whose meters no registry holds is not kept alive by this set.
   */
  private static final Set<ElectionMeters> LIVE = Collections.newSetFromMap(new WeakHashMap<>());

  private final EventCounts events;
  private final long startNanos;
  private final Tags tags;
  private final String description;
  private final ElectionDecision decision;
  // Until the runner stopped; null from then on, so no registry keeps a stopped runner alive.
  private volatile ElectionRunner runner;
  // Once the runner stopped: when its last successful Lease call was sent (or it started, if none was).
  private volatile long lastSuccessNanos;
  // Guarded by LOCK: the meters this instance registered, per registry, and the registries it waits for.
  private final Map<MeterRegistry, List<Meter>> registered = new IdentityHashMap<>();
  private final Set<MeterRegistry> waiting = Collections.newSetFromMap(new IdentityHashMap<>());
  private boolean retired;

  ElectionMeters(ElectionRunner runner, Tags extraTags, EventCounts events, long startNanos) {
    this.runner = runner;
    this.events = events;
    this.startNanos = startNanos;
    this.decision = runner.decision();
    String name = runner.leaseName().orElse("");
    String namespace = runner.namespace().orElse("");
    this.tags = extraTags.and(ElectionMetrics.TAG_NAME, name, ElectionMetrics.TAG_NAMESPACE, namespace);
    String lease = namespace.isEmpty() ? (name.isEmpty() ? "no Lease" : name) : namespace + "/" + name;
    this.description = "the runner " + runner.identity() + " (" + lease + ")";
    synchronized (LOCK) {
      LIVE.add(this);
    }
  }

  /** The counts of the runner's listener. */
  EventCounts events() {
    return events;
  }

  /** Removes the meters from every registry for good: the binder measures another runner now. */
  void remove() {
    synchronized (LOCK) {
      retire(null);
    }
  }

  /** A few words for messages: the runner's identity and Lease. */
  String describe() {
    return description;
  }

  /** For toString: how the runner stands, as far as its meters go. */
  String status() {
    synchronized (LOCK) {
      return retired ? "stopped, meters removed" : isStopped() ? "stopped" : "running";
    }
  }

  /** Whether the runner has stopped, even if the binder has not heard it yet. */
  boolean isStopped() {
    ElectionRunner current = runner;
    return current == null || current.state().kind() == ElectionState.Kind.STOPPED;
  }

  /**
   * Registers the meters in {@code registry}, unless they are there already, this runner's meters were
   * removed for good, or another runner's hold the slot (see the class comment for who gives way).
   */
  void registerIn(MeterRegistry registry) {
    synchronized (LOCK) {
      if (retired || registered.containsKey(registry)) {
        return;
      }
      boolean wasWaiting = waiting.remove(registry);
      boolean running = !isStopped();
      Set<Meter> before = identitySet(registry.getMeters());
      // A composite hands each new meter to its children one after the other before it keeps it: a child that
      // throws leaves the meter in the children before it, and none in the composite. What they had before, to find
      // those strays.
      Map<MeterRegistry, Set<Meter>> descendantsBefore = descendantsOf(registry);
      List<Meter> mine = new ArrayList<>();
      try {
        Meter master = registerMasterStatus(registry);
        if (before.contains(master)) {
          ElectionMeters holder = holderOf(registry, master);
          if (running && holder != null && holder.isStopped()) {
            LOG.info("Replacing the election metrics of {}, which has stopped, with those of {} in {}",
                holder.description, description, nameOf(registry));
            holder.retire(registry);
            master = registerMasterStatus(registry);
          }
          if (before.contains(master)) {
            if (running) {
              waiting.add(registry);
              if (!wasWaiting) {
                warnNotRegistering(registry, holder);
              }
            }
            return;
          }
        }
        mine.add(master);
        registerTheOthers(registry, before, mine);
      } catch (RuntimeException | Error e) {
        // All or none: a registry that refused one meter keeps none of this runner's, nor do its children.
        removeAfterRefusal(registry, mine, descendantsBefore, e);
        throw e;
      }
      registered.put(registry, mine);
      if (wasWaiting) {
        LOG.info("Registered the election metrics of {} in {}: the runner whose meters had the same tags has "
            + "stopped", description, nameOf(registry));
      }
    }
  }

  /**
   * The runner reached STOPPED: copies what its meters still show, lets go of it, and then removes the meters
   * from every registry if it was closed, or else hands each slot to a running runner's binder that waits for
   * it. Idempotent.
   */
  void runnerStopped() {
    ElectionRunner stopped = runner;
    if (stopped == null) {
      return;
    }
    boolean closed = stopped.isClosed();
    if (decision.contends()) {
      long now = System.nanoTime();
      lastSuccessNanos = stopped.health().sinceLastLeaseSuccess().map(since -> now - since.toNanos())
          .orElse(startNanos);
    }
    runner = null;
    synchronized (LOCK) {
      if (closed) {
        retire(null);
        return;
      }
      // A stopped runner waits for nothing: it takes a free slot, but never one another runner holds.
      waiting.clear();
      for (MeterRegistry registry : new ArrayList<>(registered.keySet())) {
        retryWaiting(registry);
      }
    }
  }

  private Meter registerMasterStatus(MeterRegistry registry) {
    return Gauge.builder(ElectionMetrics.MASTER_STATUS, this, ElectionMeters::masterStatus)
        .description("1 while this process leads the Lease, else 0")
        .tags(tags)
        .strongReference(true)
        .register(registry);
  }

  /** Registers every meter but the master status; keeps in {@code mine} those it created. */
  private void registerTheOthers(MeterRegistry registry, Set<Meter> before, List<Meter> mine) {
    // The counters refer to the counts weakly; the master status gauge keeps this, and so them, alive.
    keepIfNew(before, mine, FunctionCounter.builder(ElectionMetrics.TRANSITIONS, events, EventCounts::transitions)
        .description("Times this process became the leader (each new term)")
        .tags(tags)
        .register(registry));
    keepIfNew(before, mine, FunctionCounter.builder(ElectionMetrics.RENEW_FAILURES, events,
            EventCounts::renewFailures)
        .description("Renewals of the Lease that failed; the leader retries until its renew deadline")
        .tags(tags)
        .register(registry));
    Timer renewals = Timer.builder(ElectionMetrics.RENEW_DURATION)
        .description("Round trip of each successful renewal of the Lease")
        .tags(tags)
        .register(registry);
    if (keepIfNew(before, mine, renewals)) {
      events.recordRenewalsIn(renewals);
    }
    if (decision.contends()) {
      keepIfNew(before, mine, Gauge.builder(ElectionMetrics.LAST_SUCCESS_AGE, this,
              ElectionMeters::lastSuccessAgeSeconds)
          .description("Seconds since the last successful Lease call was sent (since the start before the first)")
          .baseUnit("seconds")
          .tags(tags)
          .strongReference(true)
          .register(registry));
    }
    keepIfNew(before, mine, Gauge.builder(ElectionMetrics.DECISION, () -> 1)
        .description("The decision this process acts on, in the tags outcome and reasons; always 1")
        .tags(tags)
        .tag(ElectionMetrics.TAG_OUTCOME, decision.outcome().name())
        .tag(ElectionMetrics.TAG_REASONS,
            decision.reasons().stream().map(Enum::name).collect(Collectors.joining(",")))
        .strongReference(true)
        .register(registry));
  }

  /** A meter the registry had already is someone else's: never recorded into, never removed. */
  private static boolean keepIfNew(Set<Meter> before, List<Meter> mine, Meter meter) {
    if (before.contains(meter)) {
      return false;
    }
    mine.add(meter);
    return true;
  }

  private void warnNotRegistering(MeterRegistry registry, ElectionMeters holder) {
    String fix = "fix: give each ElectionMetrics an extra tag that tells them apart, e.g. new "
        + "ElectionMetrics(Tags.of(\"replica\", identity))";
    if (holder == null) {
      LOG.warn("Not registering the election metrics of {} in {}: meters with its name and tags {} are "
          + "registered already, not by an ElectionMetrics; {}", description, nameOf(registry), tags, fix);
    } else {
      LOG.warn("Not registering the election metrics of {} in {}: its meters with tags {} are registered "
          + "already, by another ElectionMetrics for the same Lease, for {}, which is running: they read that "
          + "runner, and this one's take their place once it has stopped; {}", description, nameOf(registry),
          tags, holder.description, fix);
    }
  }

  /** Removes this runner's meters from every registry for good, then lets waiting binders take the slots. */
  private void retire(MeterRegistry takenBy) {
    if (retired) {
      return;
    }
    retired = true;
    waiting.clear();
    LIVE.remove(this);
    List<MeterRegistry> freed = new ArrayList<>(registered.keySet());
    // Every registry is asked, even after one threw; the first throw is rethrown once all were.
    Throwable failed = null;
    for (Map.Entry<MeterRegistry, List<Meter>> entry : registered.entrySet()) {
      try {
        removeFrom(entry.getKey(), entry.getValue());
      } catch (RuntimeException | Error e) {
        failed = addTo(failed, e);
      }
    }
    registered.clear();
    for (MeterRegistry registry : freed) {
      // The registry whose new registration retired this one is taken by it, not by a waiting binder.
      if (registry != takenBy) {
        try {
          retryWaiting(registry);
        } catch (RuntimeException | Error e) {
          failed = addTo(failed, e);
        }
      }
    }
    rethrow(failed);
  }

  private void removeFrom(MeterRegistry registry, List<Meter> meters) {
    // Only what is still this instance's: a meter removed by someone else may have a successor of theirs. A registry
    // that throws on one removal (a listener of its) is still asked to remove the others; the first throw is rethrown.
    Set<Meter> present = identitySet(registry.getMeters());
    Throwable failed = null;
    for (Meter meter : meters) {
      if (meter instanceof Timer timer) {
        events.stopRecordingIn(timer);
      }
      if (present.contains(meter)) {
        try {
          registry.remove(meter);
        } catch (RuntimeException | Error e) {
          failed = addTo(failed, e);
        }
      }
    }
    rethrow(failed);
  }

  /**
   * After {@code registry} refused one of the meters: removes those registered in it ({@code mine}), and those its
   * descendants (a composite's children) kept of the meter that failed; what throws meanwhile is added to {@code
   * refusal}.
   */
  private void removeAfterRefusal(MeterRegistry registry, List<Meter> mine,
      Map<MeterRegistry, Set<Meter>> descendantsBefore, Throwable refusal) {
    try {
      removeFrom(registry, mine);
    } catch (RuntimeException | Error e) {
      refusal.addSuppressed(e);
    }
    descendantsBefore.forEach((descendant, before) -> {
      for (Meter meter : descendant.getMeters()) {
        if (!before.contains(meter) && isOneOfMine(meter.getId())) {
          try {
            descendant.remove(meter);
          } catch (RuntimeException | Error e) {
            refusal.addSuppressed(e);
          }
        }
      }
    });
  }

  /** Whether {@code id} has the name of one of these meters and their tags. */
  private boolean isOneOfMine(Meter.Id id) {
    if (!NAMES.contains(id.getName())) {
      return false;
    }
    List<Tag> present = id.getTags();
    return tags.stream().allMatch(present::contains);
  }

  /** The registries below {@code registry} if it is a composite, each with the meters it has now; else none. */
  private static Map<MeterRegistry, Set<Meter>> descendantsOf(MeterRegistry registry) {
    Map<MeterRegistry, Set<Meter>> descendants = new IdentityHashMap<>();
    addDescendants(registry, descendants);
    return descendants;
  }

  private static void addDescendants(MeterRegistry registry, Map<MeterRegistry, Set<Meter>> descendants) {
    if (registry instanceof CompositeMeterRegistry composite) {
      for (MeterRegistry child : composite.getRegistries()) {
        if (!descendants.containsKey(child)) {
          descendants.put(child, identitySet(child.getMeters()));
          addDescendants(child, descendants);
        }
      }
    }
  }

  private static Throwable addTo(Throwable first, Throwable next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }

  private static void rethrow(Throwable failed) {
    if (failed instanceof RuntimeException runtime) {
      throw runtime;
    }
    if (failed instanceof Error error) {
      throw error;
    }
  }

  private static void retryWaiting(MeterRegistry registry) {
    for (ElectionMeters other : new ArrayList<>(LIVE)) {
      if (other.waiting.contains(registry)) {
        other.registerIn(registry);
      }
    }
  }

  private static ElectionMeters holderOf(MeterRegistry registry, Meter meter) {
    for (ElectionMeters candidate : LIVE) {
      List<Meter> meters = candidate.registered.get(registry);
      if (meters != null && meters.stream().anyMatch(known -> known == meter)) {
        return candidate;
      }
    }
    return null;
  }

  private static Set<Meter> identitySet(Collection<Meter> meters) {
    Set<Meter> set = Collections.newSetFromMap(new IdentityHashMap<>());
    set.addAll(meters);
    return set;
  }

  private static String nameOf(MeterRegistry registry) {
    return registry.getClass().getSimpleName();
  }

  private static double masterStatus(ElectionMeters meters) {
    ElectionRunner current = meters.runner;
    return current != null && current.state().kind() == ElectionState.Kind.LEADING ? 1 : 0;
  }

  private static double lastSuccessAgeSeconds(ElectionMeters meters) {
    ElectionRunner current = meters.runner;
    long now = System.nanoTime();
    if (current == null) {
      return (now - meters.lastSuccessNanos) / NANOS_PER_SECOND;
    }
    Duration since = current.health().sinceLastLeaseSuccess()
        .orElseGet(() -> Duration.ofNanos(now - meters.startNanos));
    return since.toNanos() / NANOS_PER_SECOND;
  }
}
