package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.DecisionLog;
import io.github.electionpolicy.ElectionDecision;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What an {@link ElectionRunner} is built from, and how its parts follow from it: the inputs its
 * {@link ElectionRunner.Builder} collects (public settings and the package-private seams), the check of what is
 * missing, the derivation of the identity, namespace, transport and {@link LifecycleDriver}, and the start with
 * its first log lines. The public facade keeps only what a user calls.
 *
 * <p>Not thread-safe: one builder fills it from one thread.
 */
final class RunnerAssembly {

  private static final Logger LOG = LoggerFactory.getLogger(ElectionRunner.class);
  /** The identity of a runner that runs unelected without an explicit one. */
  private static final String UNELECTED = "unelected";

  KubernetesClient client;
  ElectionDecision decision;
  LeaseSettings settings;
  final List<LeaderService> services = new ArrayList<>();
  final List<ElectionListener> listeners = new ArrayList<>();
  boolean rbacPreflight = true;
  Readiness readiness = Readiness.CONNECTED;
  Ticker ticker = Ticker.system();
  Clock clock = Clock.systemUTC();
  RunnerLoop loop = RunnerLoop.shared();
  Executor userCode = SharedPools.userCode();
  LeaseTransport transport;
  LeaseProtocol.Flaw flaw = LeaseProtocol.Flaw.NONE;
  RunnerFlaw runnerFlaw = RunnerFlaw.NONE;

  /**
   * A runner's parts, derived once at start.
   *
   * @param identitySource where the identity came from, for the log; null when running unelected
   * @param unelectedTerm the term the services run under unelected; null when contending
   * @param namespace the Lease's namespace; null when running unelected
   */
  record Parts(ElectionDecision decision, String identity, ProcessIdentity.Source identitySource,
      LeaseSettings settings, Ticker ticker, LeadershipTerm unelectedTerm, String namespace, LifecycleDriver driver,
      HealthRule.Inputs healthInputs) {}

  private boolean started;

  /**
   * Checks the inputs and derives the parts, once: a second call throws. The decision ({@link DecisionLog}) is
   * logged here only when nothing could start; otherwise {@link #begin} logs it.
   * An input that is missing or wrong throws before anything started, and may be fixed and tried again.
   */
  Parts assembleOnce() {
    if (started) {
      throw new IllegalStateException("this builder already started a runner: two runners from one "
          + "builder would contend under the same identity; use a new builder");
    }
    check();
    Parts parts;
    try {
      parts = assemble();
    } catch (RuntimeException | Error e) {
      DecisionLog.log(decision); // what was decided, before the error that says why nothing started
      throw e;
    }
    // Only once a runner exists: a start that failed on, say, a bad namespace may be retried.
    started = true;
    return parts;
  }

  /** Throws for an input that is missing, naming it and the call that sets it. */
  void check() {
    if (decision == null) {
      throw new IllegalStateException("no decision: call decision(...) or decide(policy, environment, "
          + "substrate)");
    }
    if (services.isEmpty()) {
      throw new IllegalStateException("no service: add the work to run while leading with service(...)");
    }
    if (decision.contends() && settings == null) {
      throw new IllegalStateException("the decision is to contend but no settings were given: call "
          + "settings(LeaseSettings.builder().leaseName(...).build())");
    }
    if (decision.contends() && client == null && transport == null) {
      throw new IllegalStateException("the decision is to contend but no client was given: call "
          + "client(kubernetesClient)");
    }
  }

  /**
   * Derives the parts: resolves the identity (only to contend) and the namespace, and builds the transport and
   * the driver. Throws {@link io.github.electionpolicy.InvalidElectionSettingException} for a namespace that
   * cannot be found or is not valid; nothing has started then.
   */
  Parts assemble() {
    boolean contends = decision.contends();
    // Resolved here, at start, and only to contend: running unelected needs no identity but the one for logs.
    ProcessIdentity.Resolved resolved = contends ? ProcessIdentity.resolve(settings) : null;
    String identity = resolved != null ? resolved.identity()
        : settings == null ? UNELECTED : settings.identity().orElse(UNELECTED);
    long startNanos = ticker.read();
    // Tells this runner's threads from another's in the same JVM: "leaseName:identity", or the identity.
    String threadTag = contends ? settings.leaseName() + ":" + identity : identity;
    LeadershipTerm unelectedTerm = null;
    String namespace = null;
    Optional<LeaseTransport> leaseCalls = Optional.empty();
    if (contends) {
      namespace = LeaseNamespace.resolve(settings, client == null ? null : client.getNamespace()).name();
      leaseCalls = Optional.of(transport != null ? transport
          : new Fabric8LeaseTransport(client, namespace, settings, SharedPools.io()));
    } else {
      unelectedTerm = LeadershipTerm.unelected(identity, clock.instant(), ticker);
    }
    String lease = namespace == null ? identity : namespace + "/" + settings.leaseName();
    LifecycleDriver driver = new LifecycleDriver(new LifecycleDriver.Parts(identity, lease, settings,
        Optional.ofNullable(unelectedTerm), services, listeners, loop, userCode, leaseCalls, rbacPreflight, ticker,
        clock, threadTag, flaw, runnerFlaw, false));
    HealthRule.Inputs healthInputs = new HealthRule.Inputs(contends, readiness,
        settings == null ? 0 : settings.healthBudget().toNanos(), startNanos);
    return new Parts(decision, identity, resolved == null ? null : resolved.source(), settings, ticker,
        unelectedTerm, namespace, driver, healthInputs);
  }

  /**
   * Logs what the runner does and starts it: unelected, waits until the services started (and throws if one
   * failed); contending, returns at once.
   */
  static void begin(Parts parts) {
    if (!parts.decision().contends()) {
      DecisionLog.log(parts.decision());
      LOG.info("Starting services unelected as {}", parts.identity());
      Optional<Throwable> failure = awaitUninterruptibly(parts.driver().start());
      if (failure.isPresent()) {
        // The runner stops at once: its listeners hear STOPPED before the caller acts on the failure.
        awaitStoppedHeard(parts);
        Throwable cause = failure.get();
        throw new IllegalStateException("a service failed to start: " + cause.getMessage(), cause);
      }
      return;
    }
    // The election begins first and the caller's lines are written while its first read is on the way: on an
    // empty Lease they are otherwise a third of a round trip before the first request. The runner's own lines
    // are held meanwhile, so that the decision and "Contending" still come first in the log.
    RunnerLog.Lane lane = parts.driver().logLane();
    lane.hold();
    try {
      parts.driver().start();
      logContending(parts);
    } finally {
      lane.release();
    }
  }

  /**
   * The caller's start-up lines of a contending runner. Never throws: the runner has begun, and start() must
   * return it so that it can be closed; an appender that throws (even an Error) loses its line, as a runner's
   * own lines are lost then (see {@link RunnerLog.Lane#write}).
   */
  private static void logContending(Parts parts) {
    LeaseSettings settings = parts.settings();
    try {
      DecisionLog.log(parts.decision());
      LOG.info("Contending for Lease {}/{} as {} ({}; lease {}, renew deadline {}, retry {}, on loss {})",
          parts.namespace(), settings.leaseName(), parts.identity(), parts.identitySource(),
          Durations.format(settings.leaseDuration()), Durations.format(settings.renewDeadline()),
          Durations.format(settings.retryPeriod()), settings.lossPolicy());
      Duration margin = SettingsChecks.safetyMargin(settings.leaseDuration(), settings.renewDeadline());
      if (settings.lossPolicy().kind() == LossPolicy.Kind.EXIT && settings.stopTimeout().compareTo(margin) > 0) {
        LOG.warn("stopTimeout={} is longer than leaseDuration - renewDeadline = {}: after a loss, services that "
            + "take that long to stop may still run when another replica takes over; lower stopTimeout, or "
            + "raise leaseDuration, and fence writes with the LeadershipTerm", Durations.format(settings.stopTimeout()),
            Durations.format(margin));
      }
    } catch (Throwable e) {
      // Lost, as above.
    }
  }

  /** Waits for an unelected start; interrupts do not cut it short (no runner would be returned to stop it). */
  private static Optional<Throwable> awaitUninterruptibly(CompletableFuture<Optional<Throwable>> started) {
    boolean interrupted = false;
    try {
      while (true) {
        try {
          return started.get();
        } catch (InterruptedException e) {
          interrupted = true;
        } catch (ExecutionException e) {
          return Optional.of(e.getCause());
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** The runner's stop timeout: its settings', or 10 s for one running unelected without settings. */
  static Duration stopTimeout(Parts parts) {
    return parts.settings() == null ? LeaseSettings.DEFAULT_RENEW_DEADLINE : parts.settings().stopTimeout();
  }

  /**
   * After a failed unelected start: waits, at most the stop timeout and whatever interrupts come, until the runner
   * reported {@code STOPPED} and the callbacks queued before it ran (the listeners heard it), so that what the caller
   * does about the failure (a Spring context destroys its beans) comes after them. Keeps the interrupts.
   */
  private static void awaitStoppedHeard(Parts parts) {
    LifecycleDriver driver = parts.driver();
    long deadline = System.nanoTime() + Durations.cappedNanos(stopTimeout(parts));
    boolean interrupted = false;
    boolean reported = false;
    while (true) {
      try {
        if (!reported) {
          reported = driver.awaitStoppedReported(Math.max(0, deadline - System.nanoTime()));
        }
        if (reported) {
          driver.awaitCallbacks(deadline, false);
        }
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
