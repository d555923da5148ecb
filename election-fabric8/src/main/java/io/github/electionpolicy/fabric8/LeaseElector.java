package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpec;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseSpecBuilder;
import io.fabric8.kubernetes.client.Watch;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The acquire / renew / release loop for one Lease, after client-go's {@code tools/leaderelection}, run on
 * one thread of its own.
 *
 * <ul>
 *   <li>Every write is conditional on the resourceVersion last read; a conflict means re-read.
 *   <li>A follower judges expiry by the monotonic time at which it last saw the Lease record change, never by
 *       the remote renewTime, so clock skew between nodes does not matter.
 *   <li>The leader renews every retry period and gives up once the renew deadline has passed since it sent
 *       its last successful renewal, even while a request hangs: each wait is bounded by that deadline.
 *   <li>Followers watch the Lease and take the records its events carry as their observations, dated when
 *       they arrive, instead of reading it every retry period: a released Lease is tried for at once, a held
 *       one exactly when the holder's lease duration has passed since its last change arrived. Every attempt
 *       still reads the Lease first and writes conditionally. A follower reads anyway every
 *       {@link #readPeriodNanos} (a silently dead watch cannot leave it blind, and readiness stays fresh), and
 *       polls every retry period, as without a watch, while its watch is down.
 *   <li>Release writes an empty holder and leaseDurationSeconds = 1 with a full update, never a merge patch
 *       (which would drop an empty holder).
 * </ul>
 *
 * <p>Reconcilers never run here: {@link Events} hands leadership changes to the runner, which runs them on
 * its own thread.
 */
final class LeaseElector implements Runnable {

  /** What the runner does with the elector's findings. */
  interface Events {
    /** The Lease is held by someone else, or free, as far as this follower saw. */
    void following(Optional<String> leader);

    /** This process acquired the Lease; called on the elector thread, must not block. */
    void elected(LeadershipTerm term);

    /** This process lost the Lease; may block until reconcilers stopped; says whether to contend again. */
    LossHandler.AfterLoss lost(LeadershipTerm term);

    /** A renewal failed; the leader keeps trying until its deadline. */
    void renewFailed(Throwable cause, Duration sinceLastRenewal);

    /**
     * The loop failed ({@code cause} escaped it, or its thread was interrupted) and ends for good; the term it
     * led, if any, has ended. Called on the dying elector thread.
     */
    void died(Optional<LeadershipTerm> term, Throwable cause);
  }

  /** The elector thread was interrupted: the loop cannot go on, so it ends as if it had failed. */
  static final class ElectorInterrupted extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ElectorInterrupted() {
      super("the election thread was interrupted");
    }
  }

  /** How the loop ends when the runner closes. */
  enum Finish {
    NONE, RELEASE, ABANDON
  }

  private static final Logger LOG = LoggerFactory.getLogger(LeaseElector.class);
  private static final Object MISSING = new Object();
  /**
   * The longest leaseDurationSeconds honoured when written by another holder (unless this process's own is
   * longer): a typo such as a year would otherwise keep every follower waiting long after a crash.
   */
  static final Duration LONGEST_HONOURED_LEASE_DURATION = Duration.ofHours(1);

  private final LeaseRequests requests;
  private final String namespace;
  private final String leaseName;
  private final String identity;
  private final long leaseDurationNanos;
  private final int leaseDurationSeconds;
  private final long renewDeadlineNanos;
  private final long retryPeriodNanos;
  private final long requestTimeoutNanos;
  /**
   * How often a follower with an open watch reads the Lease anyway: half the renew deadline (readiness turns
   * false after a renew deadline without a successful call), never more often than the retry period.
   */
  private final long readPeriodNanos;
  private final Events events;
  private final Ticker ticker;
  private final Clock clock;

  private final Object lock = new Object();
  // Guarded by lock.
  private boolean wakeRequested;
  private boolean closing;
  private Finish finish = Finish.NONE;
  private boolean relinquish;
  // Whether the give-up releases the Lease: not when a reconciler may still run (its stop failed).
  private boolean relinquishRelease;
  private Future<Watch> watch;
  // Each watch started has a number; callbacks of an older one are ignored.
  private int watchGeneration;
  private boolean watchOpen;
  private boolean watchReopened;
  private int watchFailures;
  private long nextWatchStartNanos;
  // The newest Lease a watch event delivered and not yet taken in (MISSING: deleted), and when it arrived.
  private Object pendingEvent;
  private long pendingEventNanos;

  // Confined to the elector thread.
  // The last Lease record seen: its spec, MISSING when the Lease did not exist, null before the first read.
  private Object observedRecord;
  private long observedNanos;
  private boolean observedAny;
  // When the last successful read of the Lease was sent, when its answer came, and its resourceVersion.
  private long lastReadSentNanos;
  private long lastReadDoneNanos;
  private String lastReadVersion;
  // The holder in the last Lease seen (kept when the Lease disappears), and the duration it claimed.
  private String lastHolder;
  private long lastHolderDurationNanos;
  // The highest leaseTransitions ever seen, so a re-created Lease never moves the fencing token back.
  private int highestTransitions = -1;
  private Lease mine;
  // The spec of this process's last successful write, kept across terms: a Lease that names this identity
  // as holder but carries another term (acquireTime, leaseTransitions) was claimed by another process using
  // the same identity.
  private LeaseSpec lastWrittenSpec;
  private boolean warnedOfSameIdentity;
  private long lastRenewSentNanos;
  private int failuresInARow;

  private volatile long lastSuccessNanos;
  private volatile boolean succeededOnce;

  LeaseElector(LeaseRequests requests, String namespace, LeaseSettings settings, Events events,
      Ticker ticker, Clock clock) {
    this.requests = requests;
    this.namespace = namespace;
    this.leaseName = settings.leaseName();
    this.identity = settings.identity();
    this.leaseDurationNanos = settings.leaseDuration().toNanos();
    this.leaseDurationSeconds = (int) settings.leaseDuration().getSeconds();
    this.renewDeadlineNanos = settings.renewDeadline().toNanos();
    this.retryPeriodNanos = settings.retryPeriod().toNanos();
    this.requestTimeoutNanos = settings.requestTimeout().toNanos();
    this.readPeriodNanos = Math.max(retryPeriodNanos, renewDeadlineNanos / 2);
    this.events = events;
    this.ticker = ticker;
    this.clock = clock;
    this.nextWatchStartNanos = ticker.read();
  }

  /** The monotonic time at which the last successful Lease call was sent, if any. */
  Optional<Long> lastSuccessNanos() {
    return succeededOnce ? Optional.of(lastSuccessNanos) : Optional.empty();
  }

  /** Stops acquiring; a leader keeps renewing until {@link #finish(Finish)}. */
  void beginClose() {
    synchronized (lock) {
      closing = true;
      lock.notifyAll();
    }
  }

  /** Ends the loop: a leader releases the Lease ({@code RELEASE}) or leaves it to expire. */
  void finish(Finish how) {
    synchronized (lock) {
      closing = true;
      finish = how;
      lock.notifyAll();
    }
  }

  /**
   * Gives up leadership as if lost (a reconciler could not start), after releasing the Lease if
   * {@code release}; otherwise the Lease is left to expire.
   */
  void relinquish(boolean release) {
    synchronized (lock) {
      relinquish = true;
      relinquishRelease = release;
      lock.notifyAll();
    }
  }

  @Override
  public void run() {
    LeadershipTerm term = null;
    try {
      while (true) {
        term = acquire();
        if (term == null) {
          return;
        }
        boolean lost = lead(term);
        term.end();
        if (!lost) {
          return;
        }
        LeadershipTerm lostTerm = term;
        term = null;
        if (events.lost(lostTerm) == LossHandler.AfterLoss.STOP) {
          return;
        }
        synchronized (lock) {
          relinquish = false;
        }
        observedRecord = null;
        mine = null;
        LOG.info("Contending again for Lease {}/{} as {}", namespace, leaseName, identity);
      }
    } catch (Throwable failure) {
      // Whatever ends this thread (an Error from a handler or an exiter, an interrupt) must not leave
      // reconcilers running under a term nobody renews, nor a runner that never reports STOPPED.
      if (term != null) {
        term.end();
      }
      LOG.error("Lease loop for {}/{} failed; contention ends", namespace, leaseName, failure);
      // The interrupt ended the loop; cleared, it would also cut short the wait for the reconcilers to stop.
      boolean interrupted = Thread.interrupted();
      try {
        events.died(Optional.ofNullable(term), failure);
      } finally {
        if (interrupted) {
          Thread.currentThread().interrupt();
        }
      }
    } finally {
      stopWatching();
    }
  }

  // ---- following -------------------------------------------------------------------------------------

  private LeadershipTerm acquire() {
    boolean readNow = true;
    synchronized (lock) {
      // Events delivered while this process led are older than the read that starts the round.
      pendingEvent = null;
    }
    while (true) {
      boolean watching;
      synchronized (lock) {
        if (closing) {
          return null;
        }
        wakeRequested = false;
      }
      watching = ensureWatching();
      synchronized (lock) {
        if (watchReopened) {
          // A watch misses what changed before it opened (or while fabric8 could not resume it): read once.
          watchReopened = false;
          readNow = true;
        }
      }
      readNow |= takeInEvent();
      long now = ticker.read();
      if (readNow || !watching || now - (lastReadSentNanos + readPeriodNanos) >= 0
          || now - attemptDueNanos(now) >= 0) {
        readNow = false;
        LeadershipTerm term = tryAcquire();
        if (term != null) {
          return term;
        }
      }
      now = ticker.read();
      long jitter = (long) (retryPeriodNanos * 0.2 * ThreadLocalRandom.current().nextDouble());
      long wake;
      if (failuresInARow > 0 || !watching) {
        // Polling, as without a watch: the API server is unreachable, or the watch is down.
        wake = now + retryPeriodNanos + jitter;
      } else {
        wake = lastReadSentNanos + readPeriodNanos;
      }
      if (failuresInARow == 0) {
        // Try exactly when the holder's lease runs out, not at the next tick after it.
        long due = attemptDueNanos(now);
        if (due - now <= 0) {
          // Not expected after a read that did not claim; a conflict has already requested a wake.
          due = now + retryPeriodNanos;
        }
        if (due - wake < 0) {
          wake = due;
        }
      }
      awaitSignal(wake, true);
    }
  }

  /**
   * When this follower should next try for the Lease, judged from what it last observed: at once when the
   * Lease is free, missing without a holder to wait for, or left by this process's own term; otherwise once
   * the holder's lease duration has passed since the record last changed.
   */
  private long attemptDueNanos(long now) {
    if (observedRecord == null) {
      return now;
    }
    if (observedRecord == MISSING) {
      boolean heldByAnother = lastHolder != null && !lastHolder.equals(identity);
      return heldByAnother ? observedNanos + lastHolderDurationNanos : now;
    }
    LeaseSpec spec = (LeaseSpec) observedRecord;
    String holder = blankToNull(spec.getHolderIdentity());
    if (holder == null || identity.equals(holder) && sameTerm(spec, lastWrittenSpec)) {
      return now;
    }
    return observedNanos + durationNanos(spec);
  }

  /**
   * Takes in the newest record a watch event delivered, as an observation dated at its arrival. Says whether
   * the Lease must be read instead: an event that arrived while a read was in flight may be older or newer
   * than the read's answer, and only a new read tells.
   */
  private boolean takeInEvent() {
    Object event;
    long arrived;
    synchronized (lock) {
      event = pendingEvent;
      arrived = pendingEventNanos;
      pendingEvent = null;
    }
    if (event == null) {
      return false;
    }
    Lease lease = event == MISSING ? null : (Lease) event;
    if (arrived - lastReadDoneNanos <= 0) {
      String version = lease == null ? null : lease.getMetadata() == null ? null
          : lease.getMetadata().getResourceVersion();
      return version == null || !version.equals(lastReadVersion);
    }
    observe(lease, arrived);
    String holder = lease == null || lease.getSpec() == null ? null
        : blankToNull(lease.getSpec().getHolderIdentity());
    long now = ticker.read();
    if (holder != null && !holder.equals(identity) && now - attemptDueNanos(now) < 0) {
      events.following(Optional.of(holder));
    }
    return false;
  }

  private LeadershipTerm tryAcquire() {
    Lease current;
    long sent = ticker.read();
    try {
      current = requests.get(requestTimeoutNanos);
      succeeded(sent);
    } catch (LeaseCallFailed e) {
      followerFailed(e);
      return null;
    }
    long now = ticker.read();
    lastReadSentNanos = sent;
    lastReadDoneNanos = now;
    lastReadVersion = current == null || current.getMetadata() == null
        ? null : current.getMetadata().getResourceVersion();
    if (current == null) {
      // A Lease deleted under its holder (kubectl delete lease) may still be led: its holder notices only at
      // its next renewal. Treat the disappearance as a change and wait out the holder's lease duration.
      observe(null, now);
      if (attemptDueNanos(now) - now > 0) {
        events.following(Optional.of(lastHolder));
        return null;
      }
      return create();
    }
    observe(current, now);
    LeaseSpec spec = current.getSpec() == null ? new LeaseSpec() : current.getSpec();
    String holder = blankToNull(spec.getHolderIdentity());
    // The same rule that schedules the follower's attempts decides whether this one may take the Lease.
    if (attemptDueNanos(now) - now > 0) {
      if (identity.equals(holder) && !warnedOfSameIdentity) {
        warnedOfSameIdentity = true;
        LOG.error("Lease {}/{} is held under this process's own identity {} by a term it did not write: another "
            + "process uses the same identity, or one with it stopped without releasing; waiting until the "
            + "Lease expires. Identities must be unique among replicas", namespace, leaseName, identity);
      }
      events.following(Optional.of(holder));
      return null;
    }
    // Every new term counts as a transition, even one taken back from this process's own earlier term
    // (after RECONTEND): leaseTransitions then tells any two terms apart, which fencing relies on.
    ZonedDateTime wallNow = wallNow();
    int transitions = spec.getLeaseTransitions() == null ? 0 : spec.getLeaseTransitions();
    LeaseSpec taken = new LeaseSpecBuilder(spec)
        .withHolderIdentity(identity)
        .withLeaseDurationSeconds(leaseDurationSeconds)
        .withAcquireTime(wallNow)
        .withRenewTime(wallNow)
        .withLeaseTransitions(transitions + 1)
        .build();
    Lease desired = new LeaseBuilder(current).withSpec(taken).build();
    return claim(() -> requests.update(desired, requestTimeoutNanos), holder);
  }

  private LeadershipTerm create() {
    ZonedDateTime wallNow = wallNow();
    Lease fresh = new LeaseBuilder()
        .withMetadata(new ObjectMetaBuilder().withName(leaseName).withNamespace(namespace).build())
        .withSpec(new LeaseSpecBuilder()
            .withHolderIdentity(identity)
            .withLeaseDurationSeconds(leaseDurationSeconds)
            .withAcquireTime(wallNow)
            .withRenewTime(wallNow)
            .withLeaseTransitions(highestTransitions < 0 ? 0 : highestTransitions + 1)
            .build())
        .build();
    return claim(() -> requests.create(fresh, requestTimeoutNanos), null);
  }

  /** A write that makes this process the holder of the Lease. */
  @FunctionalInterface
  private interface Claim {
    Lease write() throws LeaseCallFailed;
  }

  /**
   * Writes the claim: the new term on success; null when another replica wrote first (409, and the next
   * round re-reads at once) or the call failed.
   */
  private LeadershipTerm claim(Claim claim, String previousHolder) {
    long sent = ticker.read();
    try {
      Lease written = claim.write();
      succeeded(sent);
      return elected(written, sent, previousHolder);
    } catch (LeaseCallFailed e) {
      if (e.isConflict()) {
        succeeded(sent);
        requestWake();
        return null;
      }
      followerFailed(e);
      return null;
    }
  }

  private LeadershipTerm elected(Lease lease, long sentNanos, String previousHolder) {
    observe(lease, ticker.read());
    mine = lease;
    lastWrittenSpec = lease.getSpec();
    lastRenewSentNanos = sentNanos;
    LeaseSpec spec = lease.getSpec();
    LeadershipTerm term = LeadershipTerm.elected(identity,
        spec.getLeaseTransitions() == null ? 0 : spec.getLeaseTransitions(),
        spec.getAcquireTime() == null ? clock.instant() : spec.getAcquireTime().toInstant(),
        Objects.toString(lease.getMetadata().getResourceVersion(), ""), ticker, sentNanos + renewDeadlineNanos);
    LOG.info("Acquired Lease {}/{} as {} (previous holder: {}, transitions: {})", namespace, leaseName,
        identity, previousHolder == null ? "none" : previousHolder, term.leaseTransitions());
    events.elected(term);
    return term;
  }

  /** Whether two records belong to the same term: renewals and foreign bumps keep both fields. */
  private static boolean sameTerm(LeaseSpec spec, LeaseSpec written) {
    return written != null && Objects.equals(spec.getAcquireTime(), written.getAcquireTime())
        && Objects.equals(spec.getLeaseTransitions(), written.getLeaseTransitions());
  }

  private long durationNanos(LeaseSpec spec) {
    Integer seconds = spec.getLeaseDurationSeconds();
    if (seconds == null || seconds <= 0) {
      return leaseDurationNanos;
    }
    return Math.min(seconds * 1_000_000_000L, longestHonouredNanos());
  }

  private long longestHonouredNanos() {
    return Math.max(LONGEST_HONOURED_LEASE_DURATION.toNanos(), leaseDurationNanos);
  }

  /** Notes the record seen ({@code null}: the Lease does not exist) and when it last changed. */
  private void observe(Lease lease, long now) {
    Object record = lease == null ? MISSING : lease.getSpec() == null ? new LeaseSpec() : lease.getSpec();
    if (!record.equals(observedRecord)) {
      observedRecord = record;
      // Never earlier than a change already seen: an event taken in after a read may be older than the read,
      // and dating the change back would judge the holder's lease expired too soon.
      if (!observedAny || now - observedNanos > 0) {
        observedNanos = now;
      }
      observedAny = true;
      Integer seconds = lease == null ? null : ((LeaseSpec) record).getLeaseDurationSeconds();
      if (seconds != null && seconds * 1_000_000_000L > longestHonouredNanos()) {
        LOG.warn("Lease {}/{} claims leaseDurationSeconds={} (held by {}); honouring at most {}", namespace,
            leaseName, seconds, ((LeaseSpec) record).getHolderIdentity(),
            Durations.format(Duration.ofNanos(longestHonouredNanos())));
      }
    }
    if (lease != null) {
      LeaseSpec spec = (LeaseSpec) record;
      lastHolder = blankToNull(spec.getHolderIdentity());
      lastHolderDurationNanos = durationNanos(spec);
      if (spec.getLeaseTransitions() != null) {
        highestTransitions = Math.max(highestTransitions, spec.getLeaseTransitions());
      }
    }
  }

  private void followerFailed(LeaseCallFailed e) {
    if (failuresInARow++ == 0) {
      LOG.warn("Lease {}/{}: {}; retrying every {}", namespace, leaseName, e.getMessage(),
          Durations.format(Duration.ofNanos(retryPeriodNanos)));
    } else {
      LOG.debug("Lease {}/{}: {}", namespace, leaseName, e.getMessage());
    }
  }

  // ---- leading ---------------------------------------------------------------------------------------

  /** Renews until lost (true) or until the runner finishes the loop (false). */
  private boolean lead(LeadershipTerm term) {
    long lastAttempt = lastRenewSentNanos;
    while (true) {
      // Wake at the deadline if it comes before the next attempt: a loss must be seen when it happens, not up
      // to one retry period later.
      long nextAttempt = lastAttempt + retryPeriodNanos;
      long deadlineNow = lastRenewSentNanos + renewDeadlineNanos;
      Finish how = awaitSignal(nextAttempt - deadlineNow < 0 ? nextAttempt : deadlineNow, false);
      boolean giveUp;
      boolean releaseOnGiveUp;
      synchronized (lock) {
        giveUp = relinquish;
        releaseOnGiveUp = relinquishRelease;
      }
      if (how == Finish.ABANDON || giveUp && !releaseOnGiveUp) {
        LOG.warn("Leaving Lease {}/{} to expire without releasing it", namespace, leaseName);
        // A give-up counts as a loss; a finish by the runner does not.
        return how == Finish.NONE;
      }
      if (how == Finish.RELEASE || giveUp) {
        // The watch goes first: closing it while the server still sends it the release's own event is
        // pointless, and stalls fabric8's mock API server.
        stopWatching();
        release();
        return how == Finish.NONE;
      }
      long now = ticker.read();
      long deadline = lastRenewSentNanos + renewDeadlineNanos;
      if (now - deadline >= 0) {
        LOG.warn("Lost Lease {}/{}: not renewed within the renew deadline of {}", namespace, leaseName,
            Durations.format(Duration.ofNanos(renewDeadlineNanos)));
        return true;
      }
      lastAttempt = now;
      ZonedDateTime wallNow = wallNow();
      Lease desired = new LeaseBuilder(mine)
          .editSpec().withRenewTime(wallNow).withLeaseDurationSeconds(leaseDurationSeconds).endSpec()
          .build();
      try {
        Lease updated = requests.update(desired, deadline - now);
        succeeded(now);
        mine = updated;
        lastWrittenSpec = updated.getSpec();
        observe(updated, ticker.read());
        if (!term.extendUntil(now + renewDeadlineNanos)) {
          // The term lapsed before the answer came (a stalled thread, a slow answer): its reconcilers may have
          // seen it invalid, so it must not become valid again. Give it up as lost.
          LOG.warn("Lost Lease {}/{}: the renewal succeeded only after the renew deadline of {}", namespace,
              leaseName, Durations.format(Duration.ofNanos(renewDeadlineNanos)));
          return true;
        }
        lastRenewSentNanos = now;
      } catch (LeaseCallFailed e) {
        events.renewFailed(e, Duration.ofNanos(ticker.read() - lastRenewSentNanos));
        if (e.isNotFound()) {
          // Deleted: a follower may create it anew, so this term cannot go on.
          LOG.warn("Lost Lease {}/{}: it was deleted", namespace, leaseName);
          observe(null, ticker.read());
          events.following(Optional.empty());
          return true;
        }
        if (e.isConflict()) {
          succeeded(now);
          Optional<String> otherHolder = reread(deadline, term);
          if (otherHolder.isPresent()) {
            String holder = otherHolder.get();
            LOG.warn("Lost Lease {}/{}: it is now held by {}", namespace, leaseName,
                holder.isEmpty() ? "nobody" : holder);
            events.following(holder.isEmpty() ? Optional.empty() : Optional.of(holder));
            return true;
          }
          lastAttempt = ticker.read() - retryPeriodNanos;
        } else {
          LOG.warn("Lease {}/{}: renewal failed ({}), {} since the last renewal, deadline {}", namespace,
              leaseName, e.getMessage(), Durations.approx(Duration.ofNanos(ticker.read() - lastRenewSentNanos)),
              Durations.format(Duration.ofNanos(renewDeadlineNanos)));
        }
      }
    }
  }

  /**
   * After a conflict: the holder if it is no longer this process ({@code ""} for none); empty if still ours,
   * and then {@link #mine} is fresh.
   */
  private Optional<String> reread(long deadline, LeadershipTerm term) {
    long sent = ticker.read();
    try {
      Lease current = requests.get(deadline - sent);
      succeeded(sent);
      observe(current, ticker.read());
      String holder = current == null || current.getSpec() == null
          ? null : blankToNull(current.getSpec().getHolderIdentity());
      if (!identity.equals(holder)) {
        return Optional.of(holder == null ? "" : holder);
      }
      Integer transitions = current.getSpec().getLeaseTransitions();
      if (transitions == null || transitions != term.leaseTransitions()) {
        LOG.error("Lease {}/{} was taken under this process's own identity {} by another term (leaseTransitions "
            + "{}, this term's {}): another process uses the same identity. Identities must be unique among "
            + "replicas", namespace, leaseName, identity, transitions, term.leaseTransitions());
        return Optional.of(holder);
      }
      mine = current;
      lastWrittenSpec = current.getSpec();
      return Optional.empty();
    } catch (LeaseCallFailed e) {
      events.renewFailed(e, Duration.ofNanos(ticker.read() - lastRenewSentNanos));
      return Optional.empty();
    }
  }

  private void release() {
    long now = ticker.read();
    if (mine == null || now - (lastRenewSentNanos + renewDeadlineNanos) >= 0) {
      return;
    }
    for (int attempt = 0; attempt < 2; attempt++) {
      ZonedDateTime wallNow = wallNow();
      Lease released = new LeaseBuilder(mine)
          .editSpec()
          .withHolderIdentity("")
          .withLeaseDurationSeconds(1)
          .withAcquireTime(wallNow)
          .withRenewTime(wallNow)
          .endSpec()
          .build();
      long sent = ticker.read();
      try {
        requests.update(released, requestTimeoutNanos);
        succeeded(sent);
        LOG.info("Released Lease {}/{}", namespace, leaseName);
        return;
      } catch (LeaseCallFailed e) {
        if (!e.isConflict() || attempt > 0) {
          LOG.warn("Could not release Lease {}/{} ({}); another replica takes over once it expires", namespace,
              leaseName, e.getMessage());
          return;
        }
        try {
          Lease current = requests.get(requestTimeoutNanos);
          if (current == null || current.getSpec() == null
              || !identity.equals(current.getSpec().getHolderIdentity())) {
            return;
          }
          mine = current;
        } catch (LeaseCallFailed readFailed) {
          LOG.warn("Could not release Lease {}/{} ({})", namespace, leaseName, readFailed.getMessage());
          return;
        }
      }
    }
  }

  // ---- signals and the watch -------------------------------------------------------------------------

  /**
   * Waits until {@code untilNanos}, or until the runner finishes the loop; a follower ({@code acquiring})
   * also wakes on a watch event or on close.
   */
  private Finish awaitSignal(long untilNanos, boolean acquiring) {
    synchronized (lock) {
      while (true) {
        if (Thread.currentThread().isInterrupted()) {
          throw new ElectorInterrupted();
        }
        if (finish != Finish.NONE || relinquish) {
          return finish;
        }
        if (acquiring && (closing || wakeRequested)) {
          return Finish.NONE;
        }
        long remaining = untilNanos - ticker.read();
        if (remaining <= 0) {
          return Finish.NONE;
        }
        try {
          lock.wait(Math.max(1, remaining / 1_000_000), (int) Math.min(999_999, remaining % 1_000_000));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new ElectorInterrupted();
        }
      }
    }
  }

  private void requestWake() {
    synchronized (lock) {
      wakeRequested = true;
      lock.notifyAll();
    }
  }

  /**
   * Starts a watch unless one runs or is starting (after a failure, with a backoff of one retry period
   * doubling up to the lease duration); says whether one is open, so events can stand in for reads.
   */
  private boolean ensureWatching() {
    synchronized (lock) {
      if (watch != null && watch.isDone()) {
        try {
          watch.get();
        } catch (ExecutionException | java.util.concurrent.CancellationException failed) {
          LOG.debug("Watch of Lease {}/{} could not start: {}", namespace, leaseName, failed.getMessage());
          watchEnded();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (watch == null && !closing && ticker.read() - nextWatchStartNanos >= 0) {
        int generation = ++watchGeneration;
        watchOpen = false;
        watch = requests.watch(new LeaseRequests.WatchListener() {
          @Override
          public void opened() {
            watchOpened(generation);
          }

          @Override
          public void changed(Lease lease) {
            watchEvent(generation, lease);
          }

          @Override
          public void closed() {
            watchClosed(generation);
          }
        });
      }
      return watch != null && watchOpen;
    }
  }

  private void watchOpened(int generation) {
    synchronized (lock) {
      if (generation == watchGeneration && watch != null) {
        watchOpen = true;
        watchReopened = true;
        watchFailures = 0;
        wakeRequested = true;
        lock.notifyAll();
      }
    }
  }

  private void watchEvent(int generation, Lease lease) {
    long arrived = ticker.read();
    synchronized (lock) {
      if (generation == watchGeneration) {
        pendingEvent = lease == null ? MISSING : lease;
        pendingEventNanos = arrived;
        wakeRequested = true;
        lock.notifyAll();
      }
    }
  }

  private void watchClosed(int generation) {
    synchronized (lock) {
      if (generation == watchGeneration) {
        watchEnded();
        // Back to polling at once, rather than sleeping until a read due with the watch in mind.
        wakeRequested = true;
        lock.notifyAll();
      }
    }
  }

  /** Forgets the ended watch and sets when the next may start; called holding the lock. */
  private void watchEnded() {
    watch = null;
    watchOpen = false;
    long backoff = Math.min(leaseDurationNanos, retryPeriodNanos << Math.min(watchFailures, 20));
    watchFailures++;
    nextWatchStartNanos = ticker.read() + backoff;
  }

  private void stopWatching() {
    Future<Watch> current;
    synchronized (lock) {
      current = watch;
      watch = null;
      watchOpen = false;
      // Callbacks of the stopped watch must not count.
      watchGeneration++;
    }
    if (current == null) {
      return;
    }
    if (!current.cancel(true) && current.isDone()) {
      try {
        current.get().close();
      } catch (ExecutionException | RuntimeException failed) {
        LOG.debug("Watch of Lease {}/{} had failed: {}", namespace, leaseName, failed.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * Notes a successful call, dated when it was sent: like the leader's deadline, readiness then never
   * counts the time a request spent in flight as time in touch with the API server.
   */
  private void succeeded(long sentNanos) {
    lastSuccessNanos = sentNanos;
    succeededOnce = true;
    if (failuresInARow > 0) {
      LOG.info("Lease {}/{} reachable again", namespace, leaseName);
      failuresInARow = 0;
    }
  }

  private ZonedDateTime wallNow() {
    return ZonedDateTime.ofInstant(clock.instant().truncatedTo(ChronoUnit.MICROS), ZoneOffset.UTC);
  }

  private static String blankToNull(String value) {
    return value == null || value.isBlank() ? null : value;
  }
}
