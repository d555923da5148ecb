package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.fabric8.LeaseStep.Action;
import io.github.electionpolicy.fabric8.LeaseStep.Answer;
import io.github.electionpolicy.fabric8.LeaseStep.Moment;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

/**
 * Drives {@link LeaseProtocol} for one Lease on the runner's {@link RunnerLoop}: it sends the request each step
 * asks for through the {@link LeaseTransport} and times it out at the step's deadline, waits as asked on a
 * timer of the loop, keeps the follower's watch (its {@link FollowerWatch}), and hands what the protocol signals to
 * the runner through {@link ElectorSignals}. Every rule lives in the protocol; this class only does the I/O, the waiting and the log
 * lines ({@link LeaseLog}, handed to the runner's {@link RunnerLog.Lane}). It never blocks: each method runs a step
 * and returns.
 *
 * <p>Not thread-safe: every method runs on the runner's loop (answers and watch events are taken onto it).
 */
final class LeaseElector {

  private enum Mode {
    NEW, BUSY, REQUEST, HELD, AWAIT, LOSS, DELETING, FINISHED
  }

  private final LeaseTransport transport;
  private final String identity;
  private final ElectorSignals events;
  private final Ticker ticker;
  private final Clock clock;
  private final LeaseProtocol protocol;
  private final LeaseLog log;
  private final long requestTimeoutNanos;
  private final long retryPeriodNanos;

  private final RunnerFlaw flaw;
  // Null when the settings turn leadership Events off.
  private final LeadershipEvents leadershipEvents;
  // Made at its first use (followerWatch()): a leader from the first read on, the usual first election, needs none
  // before its first request, and in a fresh JVM its classes were part of that path (issue 16). A new one holds
  // nothing (no watch, nothing pending), so before that first use the elector acts as with a fresh one.
  private FollowerWatch followerWatch;
  private final LeaseSettings settings;
  // A sharded runner's membership Lease: deleted after a clean close's release.
  private final boolean deleteAfterRelease;
  // Only for an elector that deletes its Lease after a release (a sharded runner's); null otherwise.
  private final ReleasedLeaseDelete releasedDelete;
  private Mode mode = Mode.NEW;
  private long awaitUntil;
  private RunnerLoop.Timer timer;
  private LeaseTransport.Call request;
  private int requestNumber;
  private String requestWhat;
  private LeaseCallFailed lastFailure;
  private LeadershipTerm term;
  private boolean termLapsed;
  // Writes wait for the RBAC preflight's verdict (see start): the take decided meanwhile waits in heldWrite.
  private boolean writesHeld;
  private Action heldWrite;
  // When the held take was decided (the ticker's nanos): one held longer than a retry period is decided again.
  private long heldSinceNanos;
  private boolean firstAttemptOver;

  // Inputs from the runner, taken in at the next wait.
  private final ElectorInputs inputs = new ElectorInputs();

  LeaseElector(LeaseTransport transport, String lease, String identity, LeaseSettings settings, ElectorSignals events,
      Ticker ticker, Clock clock, LeaseProtocol.Flaw flaw, RunnerFlaw runnerFlaw, RunnerLog.Lane logLane,
      boolean deleteAfterRelease) {
    this.transport = transport;
    this.deleteAfterRelease = deleteAfterRelease;
    this.identity = identity;
    this.events = events;
    this.ticker = ticker;
    this.clock = clock;
    this.protocol = new LeaseProtocol(identity, settings.leaseDuration().toNanos(), settings.renewDeadline().toNanos(),
        settings.retryPeriod().toNanos(), settings.requestTimeout().toNanos(), ticker.read() ^ identity.hashCode(),
        flaw);
    this.log = new LeaseLog(new RunnerLog(LeaseElector.class, logLane), lease, identity, settings);
    this.releasedDelete = deleteAfterRelease
        ? new ReleasedLeaseDelete(transport, events, lease, settings.requestTimeout().toNanos(), logLane) : null;
    this.requestTimeoutNanos = settings.requestTimeout().toNanos();
    this.retryPeriodNanos = settings.retryPeriod().toNanos();
    this.settings = settings;
    this.flaw = runnerFlaw;
    this.leadershipEvents = settings.leadershipEvents()
        ? new LeadershipEvents(settings.leaseName(), identity, settings, transport) : null;
  }

  /** The monotonic time at which the last successful Lease call was sent, if any. */
  Optional<Long> lastSuccessNanos() {
    return protocol.lastSuccessNanos();
  }

  /** How long the process may go without a successful Lease call and still count as ready. */
  long contactWindowNanos() {
    return protocol.contactWindowNanos();
  }

  boolean finished() {
    return mode == Mode.FINISHED;
  }

  // ---- inputs from the runner ------------------------------------------------------------------------------

  /**
   * Starts the loop. With {@code holdWrites} (the RBAC preflight runs beside it) it reads, which
   * change nothing, but sends no create or update until {@link #allowWrites}: the take it decides meanwhile
   * waits, and a denial {@link #abandon}s the elector before anything was written.
   */
  void start(boolean holdWrites) {
    if (mode != Mode.NEW) {
      throw new IllegalStateException("elector started twice");
    }
    mode = Mode.BUSY;
    writesHeld = holdWrites;
    // No watch yet: one is opened only once the protocol follows (see await). A first election on a free Lease
    // then costs its read and its take, not a watch connection beside them; a follower's watch begins with the
    // Lease as it is then (the server's synthetic ADDED event), so nothing between the read and the watch is lost.
    advance(protocol.start(now()));
  }

  /** Before {@link #start} (the protocol refuses it after): what this process saw of the Lease, and since when. */
  void seen(LeaseRecord record, long seenNanos, boolean takeUnread) {
    protocol.seen(record, seenNanos, takeUnread);
  }

  /** Before {@link #start} (the protocol refuses it after): the highest token this process saw in the Lease. */
  void seenTransitions(long highestTransitions) {
    protocol.seenTransitions(highestTransitions);
  }

  /** What another watch of this process saw of the Lease ({@link FollowerWatch#sighted}); ignored unless running. */
  void sighted(LeaseRecord record, long arrivedNanos, boolean writable) {
    if (mode != Mode.NEW && mode != Mode.FINISHED) {
      followerWatch().sighted(record, arrivedNanos, writable);
    }
  }

  /** The protocol, on the loop, for a sharded runner's hand-overs (ShardHandOvers: set before start, then asked). */
  LeaseProtocol protocol() {
    return protocol;
  }

  /** A leader renews at once, or right after the request in flight ({@link LeaseProtocol#renewSoon}). */
  void renewSoon() {
    protocol.renewSoon();
    if (mode == Mode.AWAIT) {
      awaitUntil = ticker.read();
      takeInputOrWait();
    }
  }

  /** The preflight's verdict lets it contend: the held take, if any, is sent now; later writes at once. */
  void allowWrites() {
    writesHeld = false;
    if (mode == Mode.HELD) {
      Action write = heldWrite;
      heldWrite = null;
      Moment now = now();
      if (now.nanos() - heldSinceNanos > retryPeriodNanos) {
        // Decided from a read that old, the take would write a renewTime and count a term from then: held past
        // the renew deadline it is lost as soon as it is won (finding 2, h-attack8). The protocol forgets it and
        // reads again at once, so the take is decided and counted from now.
        mode = Mode.BUSY;
        advance(protocol.takeWithdrawn(now));
        return;
      }
      send(write, true);
    } else if (mode == Mode.AWAIT) {
      attemptOver(); // it follows: its first read said so before the verdict came
    }
  }

  /** Tells the transport once that the first attempt, after the verdict, is over (see firstAttemptOver). */
  private void attemptOver() {
    if (!firstAttemptOver && !writesHeld) {
      firstAttemptOver = true;
      transport.firstAttemptOver();
    }
  }

  /** Stops acquiring; a leader keeps renewing until {@link #finish}. */
  void close() {
    inputs.close();
    poke();
  }

  /** Ends the loop: a leader releases the Lease ({@code release}) or leaves it to expire. */
  void finish(boolean release) {
    boolean releases = inputs.finish(release);
    if (mode == Mode.LOSS) {
      // A loss while closing waits for this: it answers the loss (see afterLoss).
      afterLoss(false);
      return;
    }
    if (mode == Mode.REQUEST) {
      // Taken into account at the answer: a leader releases next instead of renewing once more.
      protocol.finishRequested(releases);
    }
    poke();
  }

  /** Gives {@code failed} up as lost (a service could not start); ignored unless it is still the term. */
  void relinquish(LeadershipTerm failed, boolean release) {
    inputs.relinquish(failed, release);
    poke();
  }

  /** The loss was handled: contend again, or end. */
  void afterLoss(boolean contendAgain) {
    if (mode != Mode.LOSS) {
      return;
    }
    mode = Mode.BUSY;
    Boolean release = contendAgain ? null : inputs.takeFinish();
    if (release != null) {
      // Lost while closing, after the services stopped: a loss that left the Lease as this replica wrote it
      // is released as a close would have released it; after a loss at the renew deadline (a renewal that timer
      // cancelled there may have been written all the same) the protocol reads the Lease first: the read, then
      // the release, go out as any step's requests.
      advance(protocol.finishAfterLoss(now(), release));
      return;
    }
    advance(protocol.afterLoss(now(), contendAgain));
  }

  /**
   * Ends the elector after the runner's logic failed: the term ends, nothing more is sent. Returns the term it
   * led, if any.
   */
  Optional<LeadershipTerm> fail(Throwable failure) {
    LeadershipTerm led = term;
    if (led != null) {
      led.end();
    }
    term = null;
    if (mode != Mode.FINISHED) {
      log.loopFailed(failure);
    }
    end();
    if (leadershipEvents != null) {
      leadershipEvents.failedLater(clock.instant(), events::onLoop);
    }
    return Optional.ofNullable(led);
  }

  /** Ends the elector quietly, sending nothing more (the runner stopped, or a test crashed it). */
  void abandon() {
    if (term != null) {
      term.end();
      term = null;
    }
    end();
  }

  // ---- the loop --------------------------------------------------------------------------------------------

  private void advance(LeaseStep step) {
    take(step);
    Action action = step.action();
    if (action instanceof LeaseStep.Read) {
      send(action, false);
    } else if (action instanceof LeaseStep.Create || action instanceof LeaseStep.Update) {
      if (writesHeld) {
        // Only a follower's take can come before the verdict: it waits for allowWrites (the protocol counts its
        // term from the decision, which is earlier than the send: a term that looks shorter, never longer).
        mode = Mode.HELD;
        heldWrite = action;
        heldSinceNanos = ticker.read();
      } else {
        send(action, false);
      }
    } else if (action instanceof LeaseStep.Await await) {
      attemptOver();
      await(await.untilNanos());
    } else if (action instanceof LeaseStep.HandleLoss) {
      LeadershipTerm lostTerm = term;
      term = null;
      lostTerm.end();
      inputs.lost();
      mode = Mode.LOSS;
      events.lost(lostTerm);
    } else {
      Optional<LeaseRecord> released = deleteAfterRelease ? protocol.cleanlyReleased() : Optional.empty();
      if (released.isPresent()) {
        // Deleted before the elector reports finished (see ReleasedLeaseDelete).
        mode = Mode.DELETING;
        releasedDelete.start(released.get(), () -> {
          end();
          events.finished();
        });
        return;
      }
      end();
      events.finished();
    }
  }

  private void end() {
    mode = Mode.FINISHED;
    if (releasedDelete != null) {
      releasedDelete.cancel();
    }
    heldWrite = null;
    cancelTimer();
    if (request != null) {
      request.cancel();
      request = null;
    }
    if (followerWatch != null) {
      followerWatch.stop();
    }
  }

  /** The follower's watch, made at the first call (on the loop, as every use of it). */
  private FollowerWatch followerWatch() {
    if (followerWatch == null) {
      followerWatch = new FollowerWatch(transport, events, ticker, clock, protocol, flaw, settings, this::poke);
    }
    return followerWatch;
  }

  /** Acts on what a step signals: terms for the runner, log lines for the rest. */
  private void take(LeaseStep step) {
    if (leadershipEvents != null) {
      leadershipEvents.stepLater(step, clock.instant(), events::onLoop); // after the runner heard the step
    }
    for (LeaseStep.Signal signal : step.signals()) {
      log.signal(signal);
      if (signal instanceof LeaseStep.Elected elected) {
        // A follower's watch is not closed here, while the server may still be sending it this very take-over
        // (fabric8's mock API server stalls an event loop for ~30 s when a watch closes mid-event): it closes
        // when the first renewal is sent, a retry period later, or before the release (see send).
        LeaseRecord record = elected.record();
        term = LeadershipTerm.elected(identity, record.transitions(),
            record.acquireTime() == null ? clock.instant() : record.acquireTime(),
            record.resourceVersion() == null ? "" : record.resourceVersion(), ticker, elected.validUntilNanos(),
            flaw == RunnerFlaw.TERM_VALID_UNTIL_ENDED);
        termLapsed = false;
        events.elected(term);
      } else if (signal instanceof LeaseStep.Renewed renewed) {
        // A term that lapsed on its own clock before this renewal could extend it is lost (see await): the
        // renewal renewed nothing, so listeners hear of it only once the term is extended.
        boolean extended = term != null && term.extendUntil(renewed.validUntilNanos());
        termLapsed |= term != null && !extended;
        if (extended) {
          events.renewed(Duration.ofNanos(renewed.roundTripNanos()));
        }
      } else if (signal instanceof LeaseStep.Following following) {
        events.following(following.holder());
      } else if (signal instanceof LeaseStep.RenewFailed failed) {
        events.renewFailed(lastFailure, Duration.ofNanos(failed.sinceLastRenewalNanos()));
      }
    }
  }

  /**
   * Sends the request a step asks for, and times it out at its deadline on the loop's clock; a take that was
   * {@code held} for the preflight's verdict gets a full request timeout from now.
   */
  private void send(Action action, boolean held) {
    mode = Mode.REQUEST;
    int number = ++requestNumber;
    long answerBy;
    LeaseTransport.Answered done = (answer, failure) -> events.onLoop(() -> answered(number, answer, failure));
    if (action instanceof LeaseStep.Read read) {
      requestWhat = "get Lease";
      answerBy = read.answerByNanos();
      request = transport.read(done);
    } else if (action instanceof LeaseStep.Create create) {
      requestWhat = "create Lease";
      answerBy = create.answerByNanos();
      request = transport.create(create.record(), done);
    } else {
      LeaseStep.Update update = (LeaseStep.Update) action;
      if (update.record().holder() == null || protocol.role() == LeaseProtocol.Role.LEADING) {
        // A leader needs no watch (the protocol ignores its events while leading), and each renewal would come
        // back on it as an event: it goes at the first renewal, or before the release (closing it while the
        // server sends it the release's own event is pointless, and stalls fabric8's mock API server).
        if (followerWatch != null) {
          followerWatch.stop();
        }
      }
      requestWhat = "update Lease";
      answerBy = update.answerByNanos();
      request = transport.update(update.record(), done);
    }
    if (mode != Mode.REQUEST || number != requestNumber) {
      return; // answered at once, on this very call (a closed transport)
    }
    long wait = held ? requestTimeoutNanos : Math.max(1, Math.min(answerBy - ticker.read(), requestTimeoutNanos));
    timer = events.onLoopAfter(wait, () -> timedOut(number, wait));
  }

  private void answered(int number, Answer answer, Throwable failure) {
    if (mode != Mode.REQUEST || number != requestNumber) {
      return; // timed out, or the elector ended
    }
    cancelTimer();
    request = null;
    if (answer instanceof Answer.Failed) {
      lastFailure = failure instanceof LeaseCallFailed failed ? failed
          : new LeaseCallFailed(((Answer.Failed) answer).failure(), failure, 0);
    }
    if (!(answer instanceof Answer.Failed f) || f.kind() != LeaseStep.FailureKind.OTHER) {
      events.answered(); // the server is reachable: it only hands that on
    }
    mode = Mode.BUSY;
    // Dated when it came: dated when the request was sent, a change it shows would count as seen earlier than
    // it was, and a follower would take over too soon.
    advance(protocol.answer(now(), answer));
  }

  private void timedOut(int number, long waitedNanos) {
    if (mode != Mode.REQUEST || number != requestNumber) {
      return;
    }
    timer = null;
    if (request != null) {
      request.cancel();
      request = null;
    }
    LeaseCallFailed failed = new LeaseCallFailed(requestWhat + " got no answer within "
        + Durations.approx(Duration.ofNanos(waitedNanos)), null, 0);
    lastFailure = failed;
    mode = Mode.BUSY;
    advance(protocol.answer(now(), LeaseHttp.failed(failed)));
  }

  /** Waits until {@code untilNanos} or until an input arrives; a follower keeps its watch running meanwhile. */
  private void await(long untilNanos) {
    if (termLapsed) {
      termLapsed = false;
      advance(protocol.lapsed(now()));
      return;
    }
    if (protocol.role() == LeaseProtocol.Role.FOLLOWING) {
      followerWatch().ensure(inputs.closing());
    }
    mode = Mode.AWAIT;
    awaitUntil = untilNanos;
    takeInputOrWait();
  }

  /** An input arrived: taken in at once if the elector waits, else at its next wait. */
  private void poke() {
    if (mode == Mode.AWAIT) {
      takeInputOrWait();
    }
  }

  /** Hands the first pending input to the protocol, in the order the runner relies on; or waits on. */
  private void takeInputOrWait() {
    LeaseStep next = nextInput();
    if (next == null) {
      long remaining = awaitUntil - ticker.read();
      if (remaining <= 0) {
        next = protocol.wake(now());
      } else {
        cancelTimer();
        timer = events.onLoopAfter(remaining, this::woken);
        return;
      }
    }
    cancelTimer();
    mode = Mode.BUSY;
    advance(next);
  }

  private void woken() {
    timer = null;
    if (mode == Mode.AWAIT) {
      takeInputOrWait();
    }
  }

  private LeaseStep nextInput() {
    LeaseStep next = inputs.next(protocol, term, ticker, clock);
    return next != null || followerWatch == null ? next : followerWatch.nextInput();
  }

  private void cancelTimer() {
    if (timer != null) {
      timer.cancel();
      timer = null;
    }
  }

  private Moment now() {
    return new Moment(ticker.read(), clock.instant());
  }

  @Override
  public String toString() {
    return "LeaseElector{" + identity + ", " + mode + ", " + protocol.role() + "}";
  }
}
