package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.github.electionpolicy.fabric8.LeaseStep.Action;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

/**
 * Drives {@link LeaseProtocol} for one Lease on a thread of its own: it sends the request each step asks for
 * (bounded by the step's deadline), waits as asked, watches the Lease while following, and hands what the
 * protocol signals to the runner through {@link LeaseEvents}. Every rule lives in the protocol; this class only
 * does the I/O, the waiting and the log lines ({@link LeaseLog}).
 *
 * <p>Reconcilers never run here: the runner runs them on its own thread.
 */
final class LeaseElector implements Runnable {

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

  private final LeaseRequests requests;
  private final String namespace;
  private final String identity;
  private final LeaseSettings settings;
  private final LeaseEvents events;
  private final Ticker ticker;
  private final Clock clock;
  private final LeaseProtocol protocol;
  private final LeaseLog log;
  private final LeaseWatch watch;

  private final Object lock = new Object();
  // Inputs from other threads, taken in by the elector thread between requests. Guarded by lock.
  private boolean closing;
  private boolean closeDelivered;
  private Finish finish = Finish.NONE;
  private boolean finishDelivered;
  private Boolean relinquishRelease;
  private LeadershipTerm relinquishTerm;

  // Confined to the elector thread.
  private Lease lastSeen;
  private LeadershipTerm term;
  private boolean termLapsed;
  private LeaseCallFailed lastFailure;

  private volatile Optional<Long> lastSuccessNanos = Optional.empty();
  private volatile long contactWindowNanos;

  /** @param identity the identity the runner resolved at start, written as holder */
  LeaseElector(LeaseRequests requests, String namespace, String identity, LeaseSettings settings,
      LeaseEvents events, Ticker ticker, Clock clock) {
    this.requests = requests;
    this.namespace = namespace;
    this.identity = identity;
    this.settings = settings;
    this.events = events;
    this.ticker = ticker;
    this.clock = clock;
    this.protocol = new LeaseProtocol(identity, settings, ticker.read() ^ identity.hashCode());
    this.log = new LeaseLog(namespace + "/" + settings.leaseName(), identity, settings);
    this.watch = new LeaseWatch(requests, lock, ticker, settings, namespace + "/" + settings.leaseName());
    this.contactWindowNanos = settings.renewDeadline().toNanos();
  }

  /** The monotonic time at which the last successful Lease call was sent, if any. */
  Optional<Long> lastSuccessNanos() {
    return lastSuccessNanos;
  }

  /** How long the process may go without a successful Lease call and still count as ready. */
  Duration contactWindow() {
    return Duration.ofNanos(contactWindowNanos);
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
      if (finish == Finish.NONE) {
        finish = how;
      }
      lock.notifyAll();
    }
  }

  /**
   * Gives up {@code failed} as if lost, because a reconciler could not start: after releasing the Lease when
   * {@code release} (every reconciler stopped cleanly), else leaving it to expire. Ignored unless
   * {@code failed} is still the current term: a start that fails after its term was lost must not give up
   * the next one.
   */
  void relinquish(LeadershipTerm failed, boolean release) {
    synchronized (lock) {
      relinquishTerm = failed;
      relinquishRelease = release;
      lock.notifyAll();
    }
  }

  @Override
  public void run() {
    try {
      // A follower's watch is opened from the start: it sees what changes while the first read is in flight.
      watch.ensureRunning(false);
      LeaseStep step = protocol.start(now());
      while (true) {
        take(step);
        Action action = step.action();
        if (action instanceof LeaseStep.Read || action instanceof LeaseStep.Create
            || action instanceof LeaseStep.Update) {
          // Dated when it came: dated when the request was sent, a change it shows would count as seen
          // earlier than it was, and a follower would take over too soon.
          Answer answer = send(action);
          step = protocol.answer(now(), answer);
        } else if (action instanceof LeaseStep.Await await) {
          step = await(await.untilNanos());
        } else if (action instanceof LeaseStep.HandleLoss) {
          LeadershipTerm lostTerm = term;
          term = null;
          lostTerm.end();
          synchronized (lock) {
            // A give-up of the term just lost is moot; one of a later term cannot exist yet.
            relinquishRelease = null;
            relinquishTerm = null;
          }
          boolean again = events.lost(lostTerm) == LossHandler.AfterLoss.RECONTEND;
          step = protocol.afterLoss(now(), again);
        } else {
          return;
        }
      }
    } catch (Throwable failure) {
      // Whatever ends this thread (an Error from a handler or an exiter, an interrupt) must not leave
      // reconcilers running under a term nobody renews, nor a runner that never reports STOPPED.
      if (term != null) {
        term.end();
      }
      log.loopFailed(failure);
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
      watch.stop();
    }
  }

  /** Acts on what a step signals: terms for the runner, log lines for the rest. */
  private void take(LeaseStep step) {
    lastSuccessNanos = protocol.lastSuccessNanos();
    contactWindowNanos = protocol.contactWindowNanos();
    for (LeaseStep.Signal signal : step.signals()) {
      log.signal(signal);
      if (signal instanceof LeaseStep.Elected elected) {
        // The watch stays open while leading (the protocol ignores its events), so it is not closed while the
        // server still sends it this very take-over: fabric8's mock API server stalls an event loop for ~30 s
        // when a watch closes mid-event. It closes before the release instead (see send).
        LeaseRecord record = elected.record();
        term = LeadershipTerm.elected(identity, record.transitions(),
            record.acquireTime() == null ? clock.instant() : record.acquireTime(),
            record.resourceVersion() == null ? "" : record.resourceVersion(), ticker, elected.validUntilNanos());
        termLapsed = false;
        events.elected(term);
      } else if (signal instanceof LeaseStep.Renewed renewed) {
        termLapsed |= term != null && !term.extendUntil(renewed.validUntilNanos());
        events.renewed(Duration.ofNanos(renewed.roundTripNanos()));
      } else if (signal instanceof LeaseStep.Following following) {
        events.following(following.holder());
      } else if (signal instanceof LeaseStep.RenewFailed failed) {
        events.renewFailed(lastFailure, Duration.ofNanos(failed.sinceLastRenewalNanos()));
      }
    }
  }

  /** Sends the request a step asks for, bounded by its deadline, and turns what came back into an answer. */
  private Answer send(Action action) {
    try {
      if (action instanceof LeaseStep.Read read) {
        Lease lease = requests.get(until(read.answerByNanos()));
        lastSeen = lease == null ? lastSeen : lease;
        return lease == null ? new Answer.Missing() : new Answer.Found(LeaseRecords.record(lease));
      }
      Lease written;
      if (action instanceof LeaseStep.Update release && release.record().holder() == null) {
        // The watch goes before the release: closing it while the server sends it the release's own event
        // is pointless, and stalls fabric8's mock API server.
        watch.stop();
      }
      if (action instanceof LeaseStep.Create create) {
        written = requests.create(LeaseRecords.lease(create.record(), lastSeen, namespace, settings.leaseName()),
            until(create.answerByNanos()));
      } else {
        LeaseStep.Update update = (LeaseStep.Update) action;
        written = requests.update(LeaseRecords.lease(update.record(), lastSeen, namespace, settings.leaseName()),
            until(update.answerByNanos()));
      }
      lastSeen = written;
      return new Answer.Written(LeaseRecords.record(written));
    } catch (LeaseCallFailed e) {
      return failed(e);
    }
  }

  private long until(long answerByNanos) {
    return Math.max(1, answerByNanos - ticker.read());
  }

  private Answer failed(LeaseCallFailed e) {
    lastFailure = e;
    LeaseStep.FailureKind kind = e.isConflict() ? LeaseStep.FailureKind.CONFLICT
        : e.isNotFound() ? LeaseStep.FailureKind.NOT_FOUND : LeaseStep.FailureKind.OTHER;
    return new Answer.Failed(kind, e.getMessage());
  }

  /**
   * Waits until {@code untilNanos} or until an input arrives (close, finish, relinquish, the watch), and hands
   * the first to the protocol. A follower keeps its watch running meanwhile.
   */
  private LeaseStep await(long untilNanos) {
    if (termLapsed) {
      termLapsed = false;
      return protocol.lapsed(now());
    }
    if (protocol.role() == LeaseProtocol.Role.FOLLOWING) {
      watch.ensureRunning(closingNow());
    }
    synchronized (lock) {
      while (true) {
        if (Thread.currentThread().isInterrupted()) {
          throw new ElectorInterrupted();
        }
        if (relinquishRelease != null) {
          boolean release = relinquishRelease;
          boolean current = relinquishTerm == term && term != null;
          relinquishRelease = null;
          relinquishTerm = null;
          if (current) {
            return protocol.relinquish(now(), release);
          }
        }
        if (finish != Finish.NONE && !finishDelivered) {
          finishDelivered = true;
          closeDelivered = true;
          return protocol.finish(now(), finish == Finish.RELEASE);
        }
        if (closing && !closeDelivered) {
          closeDelivered = true;
          return protocol.close(now());
        }
        LeaseWatch.Input input = watch.takeInput();
        if (input != null) {
          return input.deliverTo(protocol, now());
        }
        long remaining = untilNanos - ticker.read();
        if (remaining <= 0) {
          return protocol.wake(now());
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

  private boolean closingNow() {
    synchronized (lock) {
      return closing;
    }
  }

  private Moment now() {
    return new Moment(ticker.read(), clock.instant());
  }
}
