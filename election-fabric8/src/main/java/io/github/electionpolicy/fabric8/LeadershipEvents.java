package io.github.electionpolicy.fabric8;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides from the steps of {@link LeaseProtocol} which leadership Events are due, and hands them to the
 * {@link LeaseTransport} one at a time. Fed by {@link LeaseElector} with every step it takes (the protocol's
 * signals are where a term starts, is lost, with its cause, or is released), it keeps only the fencing token of
 * the term this process holds. A term begins with {@code became leader}; it ends with {@code lost leadership}
 * (with the cause) and then {@code stopped leading} when it was lost, or with {@code stopped leading} alone when
 * the runner gave it up (a release, or a close that leaves the Lease to expire), or when its election logic
 * failed ({@link #failed}). A process that is killed records nothing: the next holder's {@code became leader}
 * follows its own.
 *
 * <p>Best effort, and never in the election's way: {@link #step} only queues, on the loop; the transport writes
 * each Event off the loop, bounded by its request timeout and never retried, and the next waits until the one
 * before it was answered, so the server receives them in the order they happened. At most {@value #MAX_QUEUED}
 * wait; an Event beyond that (an events endpoint that hangs while leadership keeps changing) is dropped.
 *
 * <p>{@link #step} and {@link #due} run on the runner's loop only; the answers of the transport may come on any
 * thread.
 */
final class LeadershipEvents {

  private static final Logger LOG = LoggerFactory.getLogger(LeadershipEvents.class);

  /** How many Events may wait behind the one in flight. */
  static final int MAX_QUEUED = 16;
  private static final int MAX_NAME = 253;

  private final String lease;
  private final String identity;
  private final LeaseSettings settings;
  private final LeaseTransport transport;

  // Confined to the loop.
  private Integer leadingToken;
  private long lastNanos = Long.MIN_VALUE;

  // Guarded by this.
  private final ArrayDeque<LeadershipEvent> waiting = new ArrayDeque<>();
  private boolean sending;

  LeadershipEvents(String lease, String identity, LeaseSettings settings, LeaseTransport transport) {
    this.lease = lease;
    this.identity = identity;
    this.settings = settings;
    this.transport = transport;
  }

  /** Queues the Events that {@code step}, taken at {@code wall}, makes due. */
  void step(LeaseStep step, Instant wall) {
    for (LeadershipEvent event : due(step, wall)) {
      offer(event);
    }
  }

  /**
   * As {@link #step}, on a later turn of the loop through {@code later} (the runner's own task): the runner hears of
   * a term before its Event is made and handed over (a step's inputs are taken in once the loop's task that took it
   * returns; cold, the first Event's making and hand-over is some 10 ms before {@code LEADING}). Every step and
   * {@link #failedLater} goes the same way, so they reach {@link #due} in the order they were taken and the Events
   * keep theirs; only a step that can make an Event due is handed on.
   */
  void stepLater(LeaseStep step, Instant wall, Consumer<Runnable> later) {
    boolean due = step.action() instanceof LeaseStep.Finished;
    for (LeaseStep.Signal signal : step.signals()) {
      due |= signal instanceof LeaseStep.Elected || signal instanceof LeaseStep.Lost || signal instanceof LeaseStep.Fact;
    }
    if (due) {
      later.accept(() -> step(step, wall));
    }
  }

  /** As {@link #failed}, after the steps handed on before it (see {@link #stepLater}). */
  void failedLater(Instant wall, Consumer<Runnable> later) {
    later.accept(() -> failed(wall));
  }

  /** The Events that {@code step} makes due, in order; remembers the term it leaves this process holding. */
  List<LeadershipEvent> due(LeaseStep step, Instant wall) {
    List<LeadershipEvent> due = new ArrayList<>(2);
    LeaseStep.Lost lost = null;
    String ending = null;
    for (LeaseStep.Signal signal : step.signals()) {
      if (signal instanceof LeaseStep.Elected elected) {
        int token = elected.record().transitions();
        leadingToken = token;
        Optional<String> previous = elected.previousHolder().filter(holder -> !holder.equals(identity));
        due.add(event(LeadershipEvent.Kind.BECAME_LEADER, token, identity + " became leader (fencing token " + token
            + previous.map(holder -> "; previous holder " + holder).orElse("") + ")", wall));
      } else if (signal instanceof LeaseStep.Lost l) {
        lost = l;
      } else if (signal instanceof LeaseStep.Fact fact) {
        switch (fact.kind()) {
          case RELEASED -> ending = "released the Lease";
          case RELEASE_FAILED -> ending = "the release failed, so the Lease expires";
          case ABANDONED -> ending = "left the Lease to expire";
          default -> { }
        }
      }
    }
    if (ending == null && lost == null && step.action() instanceof LeaseStep.Finished) {
      // A finish with no release sent (the renew deadline had passed): the Lease is left to expire.
      ending = "left the Lease to expire";
    }
    boolean over = lost != null || ending != null || step.action() instanceof LeaseStep.Finished;
    if (leadingToken != null && over) {
      int token = leadingToken;
      leadingToken = null;
      if (lost != null) {
        due.add(event(LeadershipEvent.Kind.LOST, token,
            identity + " lost leadership (fencing token " + token + "): " + cause(lost), wall));
      }
      due.add(event(LeadershipEvent.Kind.STOPPED_LEADING, token, identity + " stopped leading (fencing token "
          + token + ")" + (ending == null ? "" : ": " + ending), wall));
    }
    return due;
  }

  /**
   * The runner's election logic failed: the term it held, if any, is over without a step of the protocol to say
   * so. Best effort to the end: a transport that throws here is not the failure the runner handles.
   */
  void failed(Instant wall) {
    if (leadingToken == null) {
      return;
    }
    int token = leadingToken;
    leadingToken = null;
    try {
      offer(event(LeadershipEvent.Kind.STOPPED_LEADING, token, identity + " stopped leading (fencing token " + token
          + "): the election failed", wall));
    } catch (RuntimeException e) {
      LOG.debug("Could not record the end of the term of Lease {}: {}", lease, e.toString());
    }
  }

  private String cause(LeaseStep.Lost lost) {
    String deadline = Durations.format(settings.renewDeadline());
    return switch (lost.cause()) {
      case RENEW_DEADLINE -> "not renewed within the renew deadline of " + deadline;
      case LATE_RENEWAL, TERM_LAPSED -> "renewed only after the renew deadline of " + deadline + " had passed";
      case DELETED -> "the Lease was deleted";
      case TAKEN -> "the Lease was taken by " + lost.holder().orElse("nobody (it was emptied)");
      case SAME_IDENTITY -> "another process with the same identity took the Lease";
      case START_FAILED -> "a reconciler could not start, so the term was given up";
    };
  }

  private LeadershipEvent event(LeadershipEvent.Kind kind, int token, String message, Instant wall) {
    // client-go names an Event <object>.<hex nanoseconds>; strictly increasing here, so that two Events of one
    // step (a loss and the end of the term) get two names.
    long nanos = Math.max(wall.getEpochSecond() * 1_000_000_000L + wall.getNano(),
        lastNanos == Long.MIN_VALUE ? Long.MIN_VALUE : lastNanos + 1);
    lastNanos = nanos;
    String suffix = "." + Long.toHexString(nanos);
    // An Event's name is a DNS-1123 subdomain too: at most 253 characters, and not ending in '.' or '-'.
    String prefix = lease.length() + suffix.length() <= MAX_NAME ? lease
        : lease.substring(0, MAX_NAME - suffix.length()).replaceAll("[.-]+$", "");
    return new LeadershipEvent(prefix + suffix, kind, identity, token, message, wall);
  }

  private void offer(LeadershipEvent event) {
    synchronized (this) {
      if (sending) {
        if (waiting.size() >= MAX_QUEUED) {
          LOG.debug("Dropped leadership Event \"{}\": {} Events of Lease {} wait to be written", event.message(),
              MAX_QUEUED, lease);
          return;
        }
        waiting.add(event);
        return;
      }
      sending = true;
    }
    send(event);
  }

  /** The Event in flight was answered (written or not): the next one goes. */
  private void sent() {
    LeadershipEvent next;
    synchronized (this) {
      next = waiting.poll();
      if (next == null) {
        sending = false;
        return;
      }
    }
    send(next);
  }

  /**
   * Hands {@code event} to the transport; one it cannot take is not recorded, and the next one goes. The transport
   * passes on what the shared pool throws when it cannot start a thread (an {@link Error}, as the callback lanes
   * see it too): that must neither fail the election (this runs in the elector's step, on the loop) nor leave the
   * Events marked as sending, with none written again.
   */
  private void send(LeadershipEvent event) {
    try {
      transport.recordEvent(event, this::sent);
    } catch (RuntimeException | Error e) {
      sent();
    }
  }
}
