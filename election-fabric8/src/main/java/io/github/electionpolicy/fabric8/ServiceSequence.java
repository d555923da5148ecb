package io.github.electionpolicy.fabric8;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The order in which services start and stop, and what a failure in either means, with no thread of its
 * own: {@link LifecycleDriver} runs it on the runner's services lane ({@link CallbackLane}), and a
 * single-threaded simulation can call it directly.
 *
 * <ul>
 *   <li>{@link #startAll(LeadershipTerm)} starts each service in order while the term is valid. When one
 *       fails (throws anything), the term is ended and no further service starts; when the term ends while
 *       starting, no further service starts either. Either way the ones started still run: the runner's next
 *       call is {@link #stopAll()}, under its stop timeout, so that a stop that hangs there has a deadline too.
 *   <li>{@link #stopAll()} stops every running service in reverse order, whatever each one throws, and
 *       reports which failed. A service is stopped at most once per start: one whose {@code stop()}
 *       re-enters (say, by closing the runner) finds nothing left to stop.
 *   <li>Anything a service throws counts as that service failing, {@link Error}s included: the safety
 *       actions (stop the others, keep the Lease when a stop failed) must happen whatever was thrown. A
 *       {@link VirtualMachineError} is {@linkplain Outcome#fatal() fatal}: the runner keeps the Lease and runs
 *       no further user code beyond the stops.
 * </ul>
 *
 * <p>Not thread-safe: one caller at a time (the services lane).
 */
final class ServiceSequence {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);

  /** How a {@link #startAll(LeadershipTerm)} ended. */
  enum StartKind {
    /** Every service started and the term is still valid. */
    STARTED,
    /** The term ended before or while starting; those started were stopped again. */
    TERM_ENDED,
    /** A service's {@code start} threw; the term was ended and those started were stopped again. */
    FAILED
  }

  /** A service and what it threw. */
  record Failure(LeaderService service, Throwable cause) {
    Failure {
      Objects.requireNonNull(service, "service");
      Objects.requireNonNull(cause, "cause");
    }
  }

  /** Common to both outcomes: the failures, and whether one was fatal. */
  interface Outcome {
    List<Failure> failures();

    /** Whether a {@link VirtualMachineError} was thrown: the JVM may be broken. */
    default boolean fatal() {
      return failures().stream().anyMatch(f -> f.cause() instanceof VirtualMachineError);
    }
  }

  /**
   * The outcome of {@link #stopAll()}: how many services were stopped and which of them threw.
   *
   * @param stopped how many {@code stop()} calls were made
   * @param failures the services whose {@code stop()} threw, in the order they were stopped
   */
  record StopOutcome(int stopped, List<Failure> failures) implements Outcome {
    static final StopOutcome NOTHING_RUNNING = new StopOutcome(0, List.of());

    StopOutcome {
      failures = List.copyOf(failures);
    }

    /** Every stop returned normally: the work stopped, and the Lease may be released. */
    boolean clean() {
      return failures.isEmpty();
    }
  }

  /**
   * The outcome of {@link #startAll(LeadershipTerm)}.
   *
   * @param kind how the start ended
   * @param started how many services returned from {@code start} normally
   * @param startFailure what the failing {@code start} threw; present only for {@link StartKind#FAILED}
   * @param stop the stops that followed a failure or the end of the term; nothing stopped when started
   */
  record StartOutcome(StartKind kind, int started, Optional<Failure> startFailure, StopOutcome stop)
      implements Outcome {
    StartOutcome {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(startFailure, "startFailure");
      Objects.requireNonNull(stop, "stop");
    }

    /** The start failure (if any) first, then the stop failures. */
    @Override
    public List<Failure> failures() {
      List<Failure> all = new ArrayList<>();
      startFailure.ifPresent(all::add);
      all.addAll(stop.failures());
      return List.copyOf(all);
    }
  }

  private final List<LeaderService> services;
  private final List<LeaderService> running = new ArrayList<>();

  private final RunnerFlaw flaw;
  // The runner's log: the started and stopped lines take their place among the runner's own (after "Acquired", and
  // held with them while start() writes its lines), written on this thread when nothing of the runner waits.
  // Null in tests of the sequence alone: then straight to SLF4J.
  private final RunnerLog log;

  ServiceSequence(List<LeaderService> services) {
    this(services, RunnerFlaw.NONE, null);
  }

  ServiceSequence(List<LeaderService> services, RunnerFlaw flaw, RunnerLog log) {
    this.services = List.copyOf(services);
    this.flaw = flaw;
    this.log = log;
  }

  private void info(String format, Object... args) {
    if (log == null) {
      LOG.info(format, args);
    } else {
      log.info(format, args);
    }
  }

  /** Whether any service runs: started and not stopped since. */
  boolean anyRunning() {
    return !running.isEmpty();
  }

  /**
   * Starts every service in order for {@code term}; see the class comment for failures and ended terms.
   *
   * @param term the term to start under; ended here if a start fails
   * @return the outcome
   */
  StartOutcome startAll(LeadershipTerm term) {
    for (LeaderService service : services) {
      if (!term.isValid()) {
        // The term ended while starting (e.g. a service closed the runner, or the Lease was lost): the
        // services after it must not start under a term another replica may already have followed.
        break;
      }
      try {
        service.start(term);
        running.add(service);
      } catch (Throwable e) {
        // Never throws (a failure whose stack trace cannot be written): the term is given up whatever was thrown.
        RunnerLog.errorSafely(LOG, "LeaderService {} failed to start; stopping the others and giving up the term",
            service, e);
        // The term is given up: work already started sees it end before its stop() is called. The stop is the
        // runner's next call (with its deadline), not this one's.
        if (flaw != RunnerFlaw.FAILED_START_TERM_LEFT_VALID) {
          term.end();
        }
        int started = running.size();
        return new StartOutcome(StartKind.FAILED, started, Optional.of(new Failure(service, e)),
            StopOutcome.NOTHING_RUNNING);
      }
    }
    int started = running.size();
    if (!term.isValid()) {
      // Nothing started under an ended term may keep running: the runner stops them next, with its deadline.
      return new StartOutcome(StartKind.TERM_ENDED, started, Optional.empty(), StopOutcome.NOTHING_RUNNING);
    }
    info("Started {} reconciler(s) for {}", started, term);
    return new StartOutcome(StartKind.STARTED, started, Optional.empty(), StopOutcome.NOTHING_RUNNING);
  }

  /**
   * Stops every running service in reverse order, calling each one's {@code stop()} whatever the others
   * threw.
   *
   * @return how many were stopped and which threw
   */
  StopOutcome stopAll() {
    if (running.isEmpty()) {
      return StopOutcome.NOTHING_RUNNING;
    }
    // A snapshot, cleared before the first stop(): a stop() that re-enters (say, by closing the runner)
    // finds nothing left to stop instead of stopping a service twice.
    List<LeaderService> stopping = List.copyOf(running);
    running.clear();
    List<Failure> failures = new ArrayList<>();
    for (int i = stopping.size() - 1; i >= 0; i--) {
      LeaderService service = stopping.get(i);
      try {
        service.stop();
      } catch (Throwable e) {
        // Never throws: the services after this one are stopped whatever this one threw.
        RunnerLog.errorSafely(LOG, "LeaderService {} failed to stop cleanly; the Lease will not be released",
            service, e);
        failures.add(new Failure(service, e));
      }
    }
    info("Stopped {} reconciler(s){}", stopping.size(),
        failures.isEmpty() ? "" : ", " + failures.size() + " of them with a failure");
    return new StopOutcome(stopping.size(), failures);
  }
}
