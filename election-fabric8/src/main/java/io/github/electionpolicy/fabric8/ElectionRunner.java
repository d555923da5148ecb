package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.DecisionLog;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The entry point: acts on the core's {@link ElectionDecision}. When the decision is
 * {@link ElectionDecision.Outcome#RUN_UNELECTED RUN_UNELECTED} it starts the reconcilers at once and makes no
 * Kubernetes API call at all; when it is {@link ElectionDecision.Outcome#CONTEND CONTEND} it contends for a
 * {@code coordination.k8s.io/v1} Lease and runs the reconcilers only while it leads. Either way it logs the
 * decision first, through {@link DecisionLog}.
 *
 * <pre>{@code
 * public static void main(String[] args) throws InterruptedException {
 *   KubernetesClient client = new KubernetesClientBuilder().build();
 *   ElectionRunner runner = ElectionRunner.builder()
 *       .client(client)
 *       .decide(ElectionPolicy.defaults(), Environment.system(), Substrate.usingKubernetesApi("kubernetes"))
 *       .settings(LeaseSettings.builder().leaseName("orders-controller").build())
 *       .service(new OrdersReconciler(client))
 *       .start();
 *   Runtime.getRuntime().addShutdownHook(new Thread(runner::close));
 *   runner.awaitStopped();
 * }
 * }</pre>
 *
 * <p>Every policy is explicit: on loss, {@link LeaseSettings#lossPolicy()}; on shutdown, {@link #close()}
 * stops the reconcilers (waiting at most {@link LeaseSettings#stopTimeout()}) and then releases the Lease
 * so another replica takes over at once; with the API server unreachable, the leader stops its reconcilers
 * within {@link LeaseSettings#renewDeadline()} and {@link #health()} turns not ready, then not live.
 *
 * <p>Start-up: {@link Builder#start()} throws for whatever it can check on the caller's thread (a missing
 * input, no valid namespace) and otherwise returns at once, in state {@link ElectionState.Starting STARTING},
 * without waiting for the API server. The RBAC preflight and the Lease calls run on the election thread. A
 * preflight that finds a missing verb stops the runner before it contends: it logs an ERROR naming the verbs
 * and the Role to apply, {@link #startupFailure()} returns the {@link LeaseAccessDeniedException}, the state
 * becomes {@code STOPPED} and {@link #awaitStopped()} returns; under the default loss policy
 * {@link LossPolicy#exit() EXIT} the process first exits with status 1, as after a loss.
 *
 * <p>Thread-safe. Reconcilers run on a thread of the runner's, listeners on another, and the Lease loop on a
 * third; none of them runs user code on the Lease loop's thread.
 */
public final class ElectionRunner implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);
  /** The identity of a runner that runs unelected without an explicit one. */
  private static final String UNELECTED = "unelected";

  private final ElectionDecision decision;
  private final String identity;
  // Where the identity came from, for the log; null when running unelected.
  private final ProcessIdentity.Source identitySource;
  private final LeaseSettings settings;
  private final Ticker ticker;
  private final long startNanos;
  private final ServiceControl control;
  private final StatePublisher publisher;
  private final Object lock = new Object();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private final LeadershipTerm unelectedTerm;
  private final String namespace;
  private final LeaseRequests requests;
  private final LeaseElector elector;
  private final KubernetesClient client;
  private final Thread electorThread;
  private final LossReaction lossReaction;
  private final Readiness readiness;
  private final boolean rbacPreflight;
  private volatile LeaseAccessDeniedException startupFailure;
  // Tells this runner's threads from another's in the same JVM: "leaseName:identity", or the identity.
  private final String threadTag;
  // The thread that finishes a close() called from a reconciler callback, once started.
  private volatile Thread finisherThread;
  private final AtomicBoolean stoppedAfterLoss = new AtomicBoolean();
  // Guarded by lock.
  private boolean closing;
  private LeadershipTerm currentTerm;
  // Whether the election thread is inside the RBAC preflight, which close() may cut short.
  private boolean preflightRunning;

  private ElectionRunner(Builder b) {
    this.decision = b.decision;
    this.settings = b.settings;
    // Resolved here, at start, and only to contend: running unelected needs no identity but the one for logs.
    ProcessIdentity.Resolved resolved = b.decision.contends() ? ProcessIdentity.resolve(b.settings) : null;
    this.identity = resolved != null ? resolved.identity()
        : b.settings == null ? UNELECTED : b.settings.identity().orElse(UNELECTED);
    this.identitySource = resolved == null ? null : resolved.source();
    this.ticker = b.ticker;
    this.startNanos = ticker.read();
    this.readiness = b.readiness;
    this.rbacPreflight = b.rbacPreflight;
    this.threadTag = decision.contends() ? b.settings.leaseName() + ":" + identity : identity;
    this.publisher = new StatePublisher(List.copyOf(b.listeners), initialState(), threadName("events"));
    this.control = new ServiceControl(List.copyOf(b.reconcilers), threadName("reconcilers"));
    if (!decision.contends()) {
      this.unelectedTerm = LeadershipTerm.unelected(identity, b.clock.instant(), ticker);
      this.namespace = null;
      this.requests = null;
      this.elector = null;
      this.electorThread = null;
      this.client = null;
      this.lossReaction = null;
      return;
    }
    this.unelectedTerm = null;
    this.client = b.client;
    this.namespace = LeaseNamespace.resolve(settings, b.client.getNamespace()).name();
    this.requests = new LeaseRequests(b.client, namespace, settings.leaseName(), settings.requestTimeout(),
        threadTag);
    this.lossReaction = new LossReaction(settings.lossPolicy(), control, settings.stopTimeout(),
        this::isClosing, this::stopAfterLoss, namespace + "/" + settings.leaseName());
    this.elector = new LeaseElector(requests, namespace, identity, settings, new ElectorEvents(), ticker, b.clock);
    this.electorThread = new Thread(this::runElection, threadName("lease"));
    this.electorThread.setDaemon(true);
  }

  /** The name of one of this runner's threads: {@code election-<role>[<leaseName>:<identity>]}. */
  private String threadName(String role) {
    return "election-" + role + "[" + threadTag + "]";
  }

  private ElectionState initialState() {
    return decision.contends() ? new ElectionState.Starting() : new ElectionState.NotContending(identity);
  }

  /**
   * Starts a builder.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  private void begin() {
    if (!decision.contends()) {
      LOG.info("Starting reconcilers unelected as {}", identity);
      try {
        control.startNow(unelectedTerm);
      } catch (RuntimeException e) {
        shutDownAfterFailedStart();
        throw e;
      }
      return;
    }
    LOG.info("Contending for Lease {}/{} as {} ({}; lease {}, renew deadline {}, retry {}, on loss {})",
        namespace, settings.leaseName(), identity, identitySource, Durations.format(settings.leaseDuration()),
        Durations.format(settings.renewDeadline()), Durations.format(settings.retryPeriod()),
        settings.lossPolicy());
    Duration margin = SettingsChecks.safetyMargin(settings.leaseDuration(), settings.renewDeadline());
    if (settings.lossPolicy().kind() == LossPolicy.Kind.EXIT && settings.stopTimeout().compareTo(margin) > 0) {
      LOG.warn("stopTimeout={} is longer than leaseDuration - renewDeadline = {}: after a loss, reconcilers that "
          + "take that long to stop may still run when another replica takes over; lower stopTimeout, or "
          + "raise leaseDuration, and fence writes with the LeadershipTerm", Durations.format(settings.stopTimeout()),
          Durations.format(margin));
    }
    electorThread.start();
  }

  /** The election thread: the RBAC preflight, then the Lease loop. */
  private void runElection() {
    if (rbacPreflight) {
      boolean contend;
      try {
        contend = preflight();
      } catch (RuntimeException | Error failure) {
        // Not expected: the review turns its own failures into an UNKNOWN verdict. Ends as a failed loop does.
        LOG.error("The RBAC preflight for Lease {}/{} failed; not contending", namespace, settings.leaseName(),
            failure);
        new ElectorEvents().died(Optional.empty(), failure);
        return;
      }
      if (!contend) {
        return;
      }
    }
    elector.run();
  }

  /**
   * Runs the RBAC preflight on the election thread; whether to contend: not when close() came first (it may
   * interrupt a review that does not answer) nor after a denial, which stops the runner here.
   */
  private boolean preflight() {
    synchronized (lock) {
      if (closing) {
        return false;
      }
      preflightRunning = true;
    }
    Optional<LeaseAccessDeniedException> denied;
    try {
      denied = RbacPreflight.check(requests, client, namespace, settings, this::isClosing);
    } finally {
      synchronized (lock) {
        preflightRunning = false;
      }
    }
    if (isClosing()) {
      // close() may have interrupted the review; the loop will not run, so the flag has done its work.
      Thread.interrupted();
      return false;
    }
    if (denied.isEmpty()) {
      return true;
    }
    LOG.error("Not contending for Lease {}/{}: {}", namespace, settings.leaseName(), denied.get().getMessage());
    synchronized (lock) {
      if (closing) {
        // close() began before the denial was acted on (e.g. while the line above was written): closing on
        // purpose is not a loss, so the loss policy does not run; close() stops the runner, so startupFailure()
        // stays empty, as after any close.
        return false;
      }
      startupFailure = denied.get();
    }
    lossReaction.startFailed();
    return false;
  }

  private void shutDownAfterFailedStart() {
    synchronized (lock) {
      closing = true;
    }
    reportStopped();
  }

  /**
   * The decision this runner acts on.
   *
   * @return the decision
   */
  public ElectionDecision decision() {
    return decision;
  }

  /**
   * The identity of this process, written as holder when it leads; resolved when the runner started (see
   * {@link LeaseSettings#identity()} for the order) and logged then.
   *
   * @return the identity; running unelected, the explicit {@link LeaseSettings#identity()} if any, else
   *     {@code "unelected"}
   */
  public String identity() {
    return identity;
  }

  /**
   * Why the runner stopped before contending, if it did: the RBAC preflight, run on the election thread
   * after {@link Builder#start()} returned, found that this process may not use the Lease. The runner then
   * logged an ERROR with the same message (the missing verbs and the Role to apply), contended for nothing,
   * started no reconciler, applied the loss policy ({@code EXIT} exits with status 1; any other policy just
   * stops) and reached {@code STOPPED}. Check it once {@link #awaitStopped()} returns to fail loudly under a
   * policy that does not exit:
   *
   * <pre>{@code
   * runner.awaitStopped();
   * runner.startupFailure().ifPresent(denied -> {
   *   System.err.println(denied.getMessage());   // the missing verbs and the Role to apply
   *   System.exit(2);
   * });
   * }</pre>
   *
   * @return the denial that stopped the runner; empty while starting or running, after a close, and after
   *     any stop that came later than the preflight
   */
  public Optional<LeaseAccessDeniedException> startupFailure() {
    return Optional.ofNullable(startupFailure);
  }

  /**
   * The namespace of the Lease.
   *
   * @return the resolved namespace; empty when running unelected
   */
  public Optional<String> namespace() {
    return Optional.ofNullable(namespace);
  }

  /**
   * The name of the Lease, from {@link LeaseSettings#leaseName()}; with {@link #namespace()} it names the
   * Lease in logs and metrics.
   *
   * @return the Lease's name; running unelected, the name the settings give if any were given (no Lease is
   *     used then), else empty
   */
  public Optional<String> leaseName() {
    return Optional.ofNullable(settings).map(LeaseSettings::leaseName);
  }

  /**
   * Where the runner stands now.
   *
   * @return the current state
   */
  public ElectionState state() {
    return publisher.current();
  }

  /**
   * The term the reconcilers run under, if they run.
   *
   * @return the current term while leading (or running unelected), else empty
   */
  public Optional<LeadershipTerm> currentTerm() {
    ElectionState state = publisher.current();
    if (state instanceof ElectionState.Leading) {
      return Optional.of(((ElectionState.Leading) state).term());
    }
    return state instanceof ElectionState.NotContending ? Optional.of(unelectedTerm) : Optional.empty();
  }

  /**
   * A health snapshot for probes; see {@link ElectionHealth} for the rules. Meaningful from the moment
   * {@link Builder#start()} returns: while {@code STARTING}, not ready and live (within the health budget).
   *
   * @return the snapshot
   */
  public ElectionHealth health() {
    ElectionState state = publisher.current();
    long now = ticker.read();
    if (!decision.contends()) {
      return new ElectionHealth(state.kind() == ElectionState.Kind.NOT_CONTENDING && control.started(), true,
          state, Optional.empty());
    }
    Optional<Duration> since = elector.lastSuccessNanos().map(last -> Duration.ofNanos(now - last));
    // A leader serves once its services started for a term that is still valid, and stops serving as soon as
    // it closes (LEADER_ONLY must never show two ready leaders around a hand-over).
    boolean servingLeader = state instanceof ElectionState.Leading leading && control.started()
        && leading.term().isValid() && !isClosing();
    boolean eligible = readiness == Readiness.LEADER_ONLY ? servingLeader
        : state.kind() == ElectionState.Kind.LEADING || state.kind() == ElectionState.Kind.FOLLOWING;
    boolean ready = eligible && since.map(s -> s.compareTo(elector.contactWindow()) <= 0).orElse(false);
    Duration silent = since.orElse(Duration.ofNanos(now - startNanos));
    // A watching follower reads once per lease duration: it is in touch for that long, whatever the budget.
    Duration budget = settings.healthBudget().compareTo(elector.contactWindow()) >= 0 ? settings.healthBudget()
        : elector.contactWindow();
    boolean live = silent.compareTo(budget) <= 0;
    return new ElectionHealth(ready, live, state, since);
  }

  /**
   * Readiness, as in {@link #health()}, under the {@link Readiness} mode the builder set.
   *
   * @return whether the process should receive traffic
   */
  public boolean isReady() {
    return health().ready();
  }

  /**
   * Liveness, as in {@link #health()}.
   *
   * @return whether the process is healthy enough not to be restarted
   */
  public boolean isLive() {
    return health().live();
  }

  /**
   * Waits until the runner has stopped (closed, or stopped contending after a loss) and its threads have
   * ended. Called from one of the runner's own threads (a reconciler, listener, loss handler or exiter), it
   * does not wait for that thread; from a loss handler or an exiter, which run on the Lease thread before the
   * runner reports STOPPED, it returns at once (the timed form then returns false): the runner stops once
   * that callback has returned. The one thread it never waits for is a reconciler thread still inside a
   * {@code stop()} that outlived {@link LeaseSettings#stopTimeout()}: the runner cannot end a stop that does
   * not return.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  public void awaitStopped() throws InterruptedException {
    if (Thread.currentThread() == electorThread) {
      // An exiter or loss handler: the runner reports STOPPED only once this callback has returned, so
      // waiting here would never end.
      return;
    }
    stopped.await();
    threadsEnded(0, true);
  }

  /**
   * Waits at most {@code timeout} until the runner has stopped and its threads have ended, as in
   * {@link #awaitStopped()}.
   *
   * @param timeout the longest wait
   * @return true if stopped, false if the wait timed out
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitStopped(Duration timeout) throws InterruptedException {
    if (Thread.currentThread() == electorThread) {
      // An exiter or loss handler: the runner reports STOPPED only once this callback has returned.
      return stopped.getCount() == 0;
    }
    long wait = Durations.cappedNanos(timeout);
    long deadline = System.nanoTime() + wait;
    return stopped.await(wait, TimeUnit.NANOSECONDS) && threadsEnded(deadline, false);
  }

  /** Waits for the runner's threads, except the caller's own; until {@code deadlineNanos} unless forever. */
  private boolean threadsEnded(long deadlineNanos, boolean forever) throws InterruptedException {
    for (Thread thread : new Thread[] {electorThread, finisherThread}) {
      if (thread != null && thread != Thread.currentThread()) {
        if (forever) {
          thread.join();
        } else {
          long left = deadlineNanos - System.nanoTime();
          if (left > 0) {
            TimeUnit.NANOSECONDS.timedJoin(thread, left);
          }
          if (thread.isAlive()) {
            return false;
          }
        }
      }
    }
    long left = forever ? Long.MAX_VALUE : deadlineNanos - System.nanoTime();
    if (!control.awaitTermination(left)) {
      return false;
    }
    left = forever ? Long.MAX_VALUE : deadlineNanos - System.nanoTime();
    if (!publisher.awaitTermination(left)) {
      return false;
    }
    left = forever ? Long.MAX_VALUE : deadlineNanos - System.nanoTime();
    return requests == null || requests.awaitTermination(left);
  }

  /**
   * Whether {@link #close()} has been called: true from the moment it begins, while it may still be stopping
   * ({@link #awaitStopped()} waits for the end). A runner in state {@code STOPPED} that is not closed stopped
   * on its own: the RBAC preflight denied it ({@link #startupFailure()}), its loss policy stopped it, or its
   * election loop failed. A listener that hears {@code STOPPED} can tell the two apart, since {@code close()}
   * marks the runner closed before it reports {@code STOPPED}; a runner that had stopped on its own and is
   * closed afterwards reports no further event.
   *
   * <pre>{@code
   * if (runner.state().kind() == ElectionState.Kind.STOPPED && !runner.isClosed()) {
   *   log.error("the runner stopped on its own; exiting so that the pod restarts");
   *   System.exit(1);
   * }
   * }</pre>
   *
   * @return true once {@code close()} has been called
   */
  public boolean isClosed() {
    return isClosing();
  }

  /**
   * Stops the reconcilers first, waiting at most {@link LeaseSettings#stopTimeout()}, then releases the
   * Lease by writing an empty holder with {@code leaseDurationSeconds = 1}, so a follower takes over at
   * once. If a reconciler did not stop in time, or its {@code stop()} threw, the Lease is not released but
   * left to expire (and an ERROR is logged), so another replica takes over only after one lease duration.
   * Idempotent; never triggers the loss policy, not even when a stop failed: closing is not a loss, and an
   * {@code EXIT} from a shutdown hook would deadlock. Safe to call from a shutdown hook, a listener, a loss
   * handler or a reconciler callback.
   *
   * <p>An interrupt does not cut it short: called on a thread whose interrupt flag is set (as shutdown hooks
   * and executors may), it still waits for the reconcilers and the release, and sets the flag again before
   * it returns, as it does when an interrupt arrives while it waits.
   *
   * <p>Called while {@code STARTING}, there is nothing to stop or release: the RBAC preflight sends no further
   * review, and one still waiting for its answer after one {@link LeaseSettings#requestTimeout()} is cut
   * short, so close() then returns within about one request timeout.
   *
   * <p>Called from a reconciler's own {@code start} or {@code stop}, it ends the term at once (so no
   * reconciler after the caller starts), returns without waiting, and finishes on a thread of its own: the
   * reconcilers stop once that callback has returned, and only then is the Lease released. Use
   * {@link #awaitStopped()} to wait for the end.
   */
  @Override
  public void close() {
    // Cleared so that the waits below run their course; whatever interrupt came is re-asserted at the end.
    boolean interrupted = Thread.interrupted();
    try {
      closeUninterruptibly();
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private void closeUninterruptibly() {
    LeadershipTerm term;
    synchronized (lock) {
      if (closing) {
        return;
      }
      closing = true;
      term = currentTerm;
      if (elector != null) {
        elector.beginClose();
      }
    }
    if (term != null) {
      term.end();
    }
    if (unelectedTerm != null) {
      unelectedTerm.end();
    }
    if (control.onControlThread()) {
      // Stopping here would miss the reconciler whose callback is still running (and any after it), and a
      // release now would let a follower start while they run: queue the stop behind this callback and
      // release only once it is done.
      Thread finisher = new Thread(this::stopThenRelease, threadName("close"));
      finisherThread = finisher;
      finisher.start();
      return;
    }
    stopThenRelease();
  }

  private void stopThenRelease() {
    Duration stopTimeout = settings == null ? LeaseSettings.DEFAULT_RENEW_DEADLINE : settings.stopTimeout();
    ServiceControl.StopResult stop = control.stopAndWait(stopTimeout);
    boolean reconcilersStopped = stop.clean();
    String instead = elector == null ? "" : "; leaving the Lease to expire instead of releasing it";
    if (stop == ServiceControl.StopResult.NOT_FINISHED) {
      LOG.error("Reconcilers did not stop within {}{}", Durations.format(stopTimeout), instead);
    } else if (stop == ServiceControl.StopResult.FAILED) {
      LOG.error("A reconciler failed to stop{}", instead);
    }
    if (elector != null) {
      elector.finish(reconcilersStopped ? LeaseElector.Finish.RELEASE : LeaseElector.Finish.ABANDON);
      if (electorThread.isAlive() && Thread.currentThread() != electorThread) {
        cutPreflightShort();
        // The loop may be in a renewal and, after a conflict, a re-read (2 requests); the release is an update
        // and, after a conflict, a read and a second update (3 more). Cutting it short would only leave the
        // Lease to expire, but waiting for all of them keeps the hand-over fast.
        joinQuietly(electorThread, settings.requestTimeout().multipliedBy(5).plusSeconds(1));
      }
      requests.close();
    }
    reportStopped();
  }

  /**
   * Closing during the RBAC preflight: the review in flight gets one request timeout to answer (so that, with a
   * server that answers, no request of this runner lands after close() returned; the preflight sends no
   * further review once closing), then the election thread is interrupted, since a review may wait 10 s.
   */
  private void cutPreflightShort() {
    synchronized (lock) {
      if (!preflightRunning) {
        return;
      }
    }
    joinQuietly(electorThread, settings.requestTimeout());
    synchronized (lock) {
      // Only while the preflight runs: the election thread clears the flag once it sees the runner closing.
      if (preflightRunning) {
        electorThread.interrupt();
      }
    }
  }

  /** Joins at most {@code timeout}; an interrupt does not cut the wait short but is kept for the caller. */
  private static void joinQuietly(Thread thread, Duration timeout) {
    long deadline = System.nanoTime() + Durations.cappedNanos(timeout);
    boolean interrupted = false;
    while (thread.isAlive() && deadline - System.nanoTime() > 0) {
      try {
        TimeUnit.NANOSECONDS.timedJoin(thread, deadline - System.nanoTime());
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public String toString() {
    return "ElectionRunner{" + identity + ", " + publisher.current() + "}";
  }

  /** Connects the Lease loop to the reconcilers and the state, off the loop's thread. */
  private final class ElectorEvents implements LeaseEvents {

    @Override
    public void following(Optional<String> leader) {
      synchronized (lock) {
        if (!closing) {
          publisher.publish(new ElectionState.Following(leader));
        }
      }
    }

    @Override
    public void elected(LeadershipTerm term) {
      synchronized (lock) {
        if (closing) {
          return;
        }
        currentTerm = term;
        publisher.publish(new ElectionState.Leading(term));
        control.startLater(term, release -> elector.relinquish(term, release));
      }
    }

    @Override
    public LossHandler.AfterLoss lost(LeadershipTerm term) {
      boolean closingNow;
      synchronized (lock) {
        closingNow = closing;
        currentTerm = null;
        // The loop may already have said who holds the Lease now; otherwise the holder is unknown.
        if (!closingNow && publisher.current().kind() == ElectionState.Kind.LEADING) {
          publisher.publish(new ElectionState.Following(Optional.empty()));
        }
      }
      if (closingNow) {
        return LossHandler.AfterLoss.STOP;
      }
      return lossReaction.react(term);
    }

    @Override
    public void renewed(Duration roundTrip) {
      publisher.renewed(roundTrip);
    }

    @Override
    public void renewFailed(Throwable cause, Duration sinceLastRenewal) {
      publisher.renewFailed(cause, sinceLastRenewal);
    }

    @Override
    public void died(Optional<LeadershipTerm> term, Throwable cause) {
      synchronized (lock) {
        currentTerm = null;
        if (closing) {
          // close() stops the reconcilers and reports STOPPED itself.
          return;
        }
        // The term ended with the loop and nobody renews the Lease: as after a loss, the runner no longer
        // reports leading while its reconcilers stop (which may take long), or another replica's take-over
        // would show two leaders.
        if (publisher.current().kind() == ElectionState.Kind.LEADING) {
          publisher.publish(new ElectionState.Following(Optional.empty()));
        }
      }
      try {
        lossReaction.loopDied();
      } finally {
        stopAfterLoss();
      }
    }
  }

  private boolean isClosing() {
    synchronized (lock) {
      return closing;
    }
  }

  /**
   * The runner will not contend again (loss policy, or the loop died): ends its threads. Called on the
   * election thread, which ends right after.
   */
  private void stopAfterLoss() {
    if (!stoppedAfterLoss.compareAndSet(false, true)) {
      return;
    }
    if (isClosing()) {
      // close() began: it closes the requests and reports STOPPED itself once it has stopped the reconcilers
      // or given up on them. Reported here, after a wait for a stop that close() cut short, STOPPED would let
      // awaitStopped() wait for a stop() still within close()'s stopTimeout, for as long as that stop() hangs.
      return;
    }
    requests.close();
    reportStopped();
  }

  /** Ends the services' and listeners' threads, then reports STOPPED: the last step of every way to stop. */
  private void reportStopped() {
    control.shutdown();
    publisher.publish(new ElectionState.Stopped());
    publisher.shutdown();
    stopped.countDown();
    LOG.info("Stopped {}", identity);
  }

  /**
   * Test hook: ends this runner the way a killed process ends, as far as other replicas can tell. The Lease
   * loop stops without another write (no release, no renewal), no reconciler is stopped and no listener or
   * loss policy runs; the Lease is left to expire. The runner's threads end, so the only trace left is the
   * Lease as last renewed. (A real crash also ends the reconcilers' work; a test's reconcilers have no work
   * of their own, and the test records the crash as the instant their work ended.)
   */
  void crashForTest() {
    synchronized (lock) {
      closing = true;
    }
    if (elector != null) {
      elector.finish(LeaseElector.Finish.ABANDON);
      joinQuietly(electorThread, settings.requestTimeout().multipliedBy(2).plusSeconds(1));
      requests.close();
    }
    control.shutdown();
    publisher.shutdown();
    stopped.countDown();
  }

  /**
   * Builds and starts an {@link ElectionRunner}. Not thread-safe: use one builder from one thread.
   *
   * <pre>{@code
   * ElectionRunner runner = ElectionRunner.builder()
   *     .client(client)
   *     .decision(decision)
   *     .settings(settings)
   *     .service(LeaderService.of(term -> informers.start(), informers::stop))
   *     .listener(metricsListener)
   *     .start();
   * }</pre>
   */
  public static final class Builder {
    private KubernetesClient client;
    private ElectionDecision decision;
    private LeaseSettings settings;
    private final List<LeaderService> reconcilers = new ArrayList<>();
    private final List<ElectionListener> listeners = new ArrayList<>();
    private boolean rbacPreflight = true;
    private Readiness readiness = Readiness.CONNECTED;
    private boolean started;
    private Ticker ticker = Ticker.system();
    private Clock clock = Clock.systemUTC();

    private Builder() {}

    /**
     * Sets the client used for Lease calls. Required when the decision is to contend; never called when
     * running unelected. Its own timeout and retry settings do not apply to Lease calls.
     *
     * @param client the client
     * @return this builder
     */
    public Builder client(KubernetesClient client) {
      this.client = Objects.requireNonNull(client, "client");
      return this;
    }

    /**
     * Sets the decision to act on. Required (or {@link #decide(ElectionPolicy, Environment, Substrate)}).
     *
     * @param decision the core's decision
     * @return this builder
     */
    public Builder decision(ElectionDecision decision) {
      this.decision = Objects.requireNonNull(decision, "decision");
      return this;
    }

    /**
     * Computes the decision to act on from a policy, an environment and a substrate.
     *
     * @param policy the policy, e.g. {@link ElectionPolicy#defaults()}
     * @param environment the environment, e.g. {@link Environment#system()}
     * @param substrate what the controller works on
     * @return this builder
     */
    public Builder decide(ElectionPolicy policy, Environment environment, Substrate substrate) {
      return decision(Objects.requireNonNull(policy, "policy").decide(environment, substrate));
    }

    /**
     * Sets the Lease settings. Required when the decision is to contend; when running unelected only the
     * identity (for logs) and the stop timeout are used, and without settings the stop timeout is 10 s.
     *
     * @param settings the settings
     * @return this builder
     */
    public Builder settings(LeaseSettings settings) {
      this.settings = Objects.requireNonNull(settings, "settings");
      return this;
    }

    /**
     * Adds a service; services start in the order added and stop in reverse order.
     *
     * @param service the work to run while leading
     * @return this builder
     */
    public Builder service(LeaderService service) {
      reconcilers.add(Objects.requireNonNull(service, "service"));
      return this;
    }

    /**
     * Adds a listener.
     *
     * @param listener the listener
     * @return this builder
     */
    public Builder listener(ElectionListener listener) {
      listeners.add(Objects.requireNonNull(listener, "listener"));
      return this;
    }

    /**
     * Sets which contending replicas {@link ElectionRunner#health()} calls ready: {@link Readiness#CONNECTED}
     * (the default: leader and followers alike, while in touch with the API server) or
     * {@link Readiness#LEADER_ONLY} (the leader only, for a Service that must route to it). A runner that
     * runs unelected is ready once started in both modes.
     *
     * @param readiness the readiness mode
     * @return this builder
     */
    public Builder readiness(Readiness readiness) {
      this.readiness = Objects.requireNonNull(readiness, "readiness");
      return this;
    }

    /**
     * Turns the RBAC preflight on (the default) or off. It runs on the election thread before the first
     * Lease call; a denial stops the runner, see {@link ElectionRunner#startupFailure()}.
     *
     * @param enabled whether to check with SelfSubjectAccessReviews before contending
     * @return this builder
     */
    public Builder rbacPreflight(boolean enabled) {
      this.rbacPreflight = enabled;
      return this;
    }

    Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    Builder clock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * Logs the decision and starts: the reconcilers at once when unelected (this call returns once they
     * started), or the election thread, which runs the RBAC preflight and then contends for the Lease.
     *
     * <p>When contending it returns promptly, in state {@link ElectionState.Starting STARTING}: it makes no
     * API call on the caller's thread, so it never waits for the API server, even an unreachable one (the
     * tests bound it by one {@link LeaseSettings#requestTimeout()}; it takes milliseconds). Everything that can
     * be checked without the server throws from here; what the server must answer is reported later: a
     * preflight that finds a missing verb stops the runner (an ERROR log, {@link
     * ElectionRunner#startupFailure()}, state {@code STOPPED}, and an exit under the {@code EXIT} loss policy).
     *
     * <p>A start that throws because of this builder's inputs (a missing one, no valid namespace) started
     * nothing: fix the input and call {@code start()} again on the same builder. One that throws because a
     * service's {@code start()} failed (running unelected, the services start here) did start a runner, which
     * stopped at once: this builder then counts as started, so a retry needs a new builder.
     *
     * @return the running runner; close it to stop
     * @throws IllegalStateException if a required input is missing, if a service failed to start while running
     *     unelected (its failure is the cause), or if this builder already started a runner
     * @throws io.github.electionpolicy.InvalidElectionSettingException if no namespace can be found, or the one
     *     found (service-account file or client) is not a valid namespace name
     */
    public ElectionRunner start() {
      if (started) {
        throw new IllegalStateException("this builder already started a runner: two runners from one "
            + "builder would contend under the same identity; use a new builder");
      }
      if (decision == null) {
        throw new IllegalStateException("no decision: call decision(...) or decide(policy, environment, "
            + "substrate)");
      }
      if (reconcilers.isEmpty()) {
        throw new IllegalStateException("no service: add the work to run while leading with service(...)");
      }
      if (decision.contends() && settings == null) {
        throw new IllegalStateException("the decision is to contend but no settings were given: call "
            + "settings(LeaseSettings.builder().leaseName(...).build())");
      }
      if (decision.contends() && client == null) {
        throw new IllegalStateException("the decision is to contend but no client was given: call "
            + "client(kubernetesClient)");
      }
      DecisionLog.log(decision);
      ElectionRunner runner = new ElectionRunner(this);
      // Only once a runner exists: a start that failed on, say, a bad namespace may be retried.
      started = true;
      runner.begin();
      return runner;
    }
  }
}
