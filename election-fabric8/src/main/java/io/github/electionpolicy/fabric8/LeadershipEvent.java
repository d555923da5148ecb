package io.github.electionpolicy.fabric8;

import java.time.Instant;
import java.util.Objects;

/**
 * One leadership change as a {@code core/v1} Event on the Lease: what {@link LeadershipEvents} decided is due and
 * a {@link LeaseTransport} writes. The wording follows client-go's elector ({@code <identity> became leader},
 * {@code <identity> stopped leading}, reason {@value #REASON}), with the term's fencing token and, for a loss,
 * its cause. An immutable value.
 *
 * @param name the Event's name, {@code <lease>.<hex of the time in nanoseconds>} as client-go's recorder names
 *     them; unique among this runner's Events
 * @param kind which change
 * @param identity who led
 * @param fencingToken the term's {@code leaseTransitions}
 * @param message the Event's message
 * @param time when the change happened, on the runner's wall clock
 */
record LeadershipEvent(String name, Kind kind, String identity, int fencingToken, String message, Instant time) {

  /** The reason of every leadership Event, as client-go writes it. */
  static final String REASON = "LeaderElection";

  /** The Event's {@code reportingComponent}: who wrote it. */
  static final String REPORTING_COMPONENT = "election-policy";

  /** Which leadership change; the Event's type follows from it. */
  enum Kind {
    /** This process won a term. */
    BECAME_LEADER("Normal"),
    /** The term ended without this process giving it up: the cause is in the message. */
    LOST("Warning"),
    /** The term is over (after a loss, a release, or a close that left the Lease to expire). */
    STOPPED_LEADING("Normal");

    private final String type;

    Kind(String type) {
      this.type = type;
    }

    /** The Event's {@code type}: {@code Normal} or {@code Warning}. */
    String type() {
      return type;
    }
  }

  LeadershipEvent {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(identity, "identity");
    Objects.requireNonNull(message, "message");
    Objects.requireNonNull(time, "time");
  }
}
