package io.github.electionpolicy.fabric8;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One uninterrupted stretch of leadership, handed to {@link LeaderService#start(LeadershipTerm)}. Long work
 * checks {@link #isValid()} between steps or waits on {@link #awaitEnd(Duration)}; writes can be fenced
 * with the term's identity, for instance by storing {@link #leaseTransitions()} next to the data written
 * and refusing writes that carry an older one.
 *
 * <pre>{@code
 * public void start(LeadershipTerm term) {
 *   worker = Executors.newSingleThreadExecutor();
 *   worker.submit(() -> {
 *     while (term.isValid()) {
 *       reconcileOnce(term.leaseTransitions());   // fencing token
 *     }
 *   });
 * }
 * }</pre>
 *
 * <p>A term is valid from acquisition until the earliest of: leadership was lost, the runner was closed,
 * or the renew deadline passed since the last successful renewal (measured on a monotonic clock, so the
 * term turns invalid on time even if the runner's loop is stalled). Once invalid it never becomes valid
 * again. When the process runs unelected, the term is {@linkplain #isElected() not elected} and stays
 * valid until the runner is closed.
 *
 * <p>Thread-safe.
 */
public final class LeadershipTerm {

  private final String holderIdentity;
  private final int leaseTransitions;
  private final Instant acquireTime;
  private final String resourceVersion;
  private final boolean elected;
  private final Ticker ticker;
  private final CountDownLatch ended = new CountDownLatch(1);
  private volatile long validUntilNanos;
  // Set by the first look that finds the deadline passed: from then on no renewal can revive the term.
  private volatile boolean lapsed;
  private boolean endedFlagOnly;

  private LeadershipTerm(String holderIdentity, int leaseTransitions, Instant acquireTime,
      String resourceVersion, boolean elected, Ticker ticker, long validUntilNanos) {
    this.holderIdentity = holderIdentity;
    this.leaseTransitions = leaseTransitions;
    this.acquireTime = acquireTime;
    this.resourceVersion = resourceVersion;
    this.elected = elected;
    this.ticker = ticker;
    this.validUntilNanos = validUntilNanos;
  }

  static LeadershipTerm elected(String holderIdentity, int leaseTransitions, Instant acquireTime,
      String resourceVersion, Ticker ticker, long validUntilNanos) {
    return elected(holderIdentity, leaseTransitions, acquireTime, resourceVersion, ticker, validUntilNanos, false);
  }

  /** @param endedFlagOnly the simulation's broken variant {@link RunnerFlaw#TERM_VALID_UNTIL_ENDED} */
  static LeadershipTerm elected(String holderIdentity, int leaseTransitions, Instant acquireTime,
      String resourceVersion, Ticker ticker, long validUntilNanos, boolean endedFlagOnly) {
    LeadershipTerm term = new LeadershipTerm(Objects.requireNonNull(holderIdentity), leaseTransitions,
        Objects.requireNonNull(acquireTime), Objects.requireNonNull(resourceVersion), true, ticker,
        validUntilNanos);
    term.endedFlagOnly = endedFlagOnly;
    return term;
  }

  static LeadershipTerm unelected(String identity, Instant startTime, Ticker ticker) {
    return new LeadershipTerm(identity, 0, startTime, "", false, ticker, 0);
  }

  /**
   * The identity written as the Lease holder, that of this process.
   *
   * @return the holder identity
   */
  public String holderIdentity() {
    return holderIdentity;
  }

  /**
   * The Lease's {@code leaseTransitions} written at acquisition: it grows by one with each new term
   * (each time the Lease changes hands, or is taken back after a loss), which makes it a fencing token.
   *
   * @return the transitions count of this term; 0 when unelected
   */
  public int leaseTransitions() {
    return leaseTransitions;
  }

  /**
   * When the Lease was acquired, as written in its {@code acquireTime} (wall clock of this process).
   *
   * @return the acquire time; the start time when unelected
   */
  public Instant acquireTime() {
    return acquireTime;
  }

  /**
   * The Lease's {@code resourceVersion} right after acquisition.
   *
   * @return the resource version; empty when unelected
   */
  public String resourceVersion() {
    return resourceVersion;
  }

  /**
   * Whether this term comes from winning the Lease, rather than from running unelected.
   *
   * @return true when elected
   */
  public boolean isElected() {
    return elected;
  }

  /**
   * Whether the work of this term may still go on.
   *
   * @return false once leadership was lost, the runner closed, or the renew deadline passed unrenewed
   */
  public boolean isValid() {
    if (ended.getCount() == 0) {
      return false;
    }
    if (!elected || endedFlagOnly) {
      return true;
    }
    if (lapsed) {
      return false;
    }
    if (ticker.read() - validUntilNanos < 0) {
      return true;
    }
    lapsed = true;
    return false;
  }

  /**
   * Waits until the term has ended (leadership lost or the runner closed).
   *
   * @param timeout the longest wait
   * @return true if the term ended, false if the wait timed out
   * @throws InterruptedException if interrupted while waiting
   */
  public boolean awaitEnd(Duration timeout) throws InterruptedException {
    return ended.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Waits as long as needed until the term has ended.
   *
   * @throws InterruptedException if interrupted while waiting
   */
  public void awaitEnd() throws InterruptedException {
    ended.await();
  }

  /**
   * Moves the deadline to {@code nanos} after a renewal, unless the old deadline has already passed: a renewal
   * that succeeds too late must not make a lapsed term valid again. Ending the term (on close, while the
   * Lease is still renewed) does not stop extensions.
   *
   * @return false if the term had lapsed, and then the renewal came too late to keep the term
   */
  synchronized boolean extendUntil(long nanos) {
    if (lapsed || ticker.read() - validUntilNanos >= 0) {
      lapsed = true;
      return false;
    }
    validUntilNanos = nanos;
    // A concurrent isValid() may have seen the old deadline pass just now; it then wins.
    return !lapsed;
  }

  /**
   * The renew deadline on the runner's ticker: past it the term is over unless a renewal extended it in time
   * (ending the term does not stop the extensions). The simulation's checks read it to tell whether a close ran
   * past the deadline, where the release rules are stricter.
   */
  long validUntilNanos() {
    return validUntilNanos;
  }

  void end() {
    ended.countDown();
  }

  boolean hasEnded() {
    return ended.getCount() == 0;
  }

  @Override
  public String toString() {
    return elected
        ? "LeadershipTerm{holder=" + holderIdentity + ", leaseTransitions=" + leaseTransitions
            + ", acquireTime=" + acquireTime + ", resourceVersion=" + resourceVersion + "}"
        : "LeadershipTerm{unelected " + holderIdentity + " since " + acquireTime + "}";
  }
}
