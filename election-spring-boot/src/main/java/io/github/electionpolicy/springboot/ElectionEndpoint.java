package io.github.electionpolicy.springboot;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.fabric8.LeaseSettings;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Collectors;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code election} Actuator endpoint, read-only: where this replica stands in the election, as an
 * {@link ElectionDescriptor} (state, holder, identity, term and fencing token, Lease, decision, last renewals
 * and renew failures). Defined by {@link ElectionEndpointAutoConfiguration} when the endpoint is available, and
 * exposed like any endpoint:
 *
 * <pre>{@code
 * management.endpoints.web.exposure.include=health,election
 * }</pre>
 *
 * <p>then {@code GET /actuator/election} answers, e.g. on a leader:
 *
 * <pre>{@code
 * {"state":"LEADING","identity":"orders-7d9f-x2k4p","holder":"orders-7d9f-x2k4p",
 *  "term":{"leaseTransitions":3,"acquireTime":"2026-12-01T11:02:03.120Z","valid":true,"elected":true},
 *  "lease":{"namespace":"shop","name":"orders-service",...},"decision":{"outcome":"CONTEND",...},
 *  "renewals":[{"time":"2026-12-01T11:05:41.007Z","roundTripMillis":4}, ...],"renewFailures":[]}
 * }</pre>
 *
 * <p>It shows identities, the Lease's name and the decision's inputs by name, never a credential; it has no
 * write operation. Thread-safe: each read takes one snapshot of the state and builds the answer from it.
 */
@Endpoint(id = ElectionEndpoint.ID)
public final class ElectionEndpoint {

  /** The endpoint's id, {@code election}: its path is {@code /actuator/election}. */
  public static final String ID = "election";

  private final ElectionLifecycle election;
  private final RenewalHistory history;

  ElectionEndpoint(ElectionLifecycle election, RenewalHistory history) {
    this.election = Objects.requireNonNull(election, "election");
    this.history = Objects.requireNonNull(history, "history");
  }

  /**
   * Where this replica stands now.
   *
   * @return the state, holder, identity, term, Lease, decision and last renewals
   */
  @ReadOperation
  public ElectionDescriptor election() {
    // One state, read once: the holder and the term are taken from it, so they agree with each other.
    ElectionState state = election.state();
    Optional<ElectionRunner> runner = election.runner();
    LeaseSettings settings = election.settings();
    ElectionDecision decision = election.decision();
    String identity = runner.map(ElectionRunner::identity).orElse(settings.identity().orElse(null));
    return new ElectionDescriptor(state.kind().name(), identity, holder(state), term(state).orElse(null),
        decision.contends() ? lease(runner, settings) : null, decision(decision), history.renewals(),
        history.renewFailures());
  }

  private static String holder(ElectionState state) {
    if (state instanceof ElectionState.Leading) {
      return ((ElectionState.Leading) state).term().holderIdentity();
    }
    if (state instanceof ElectionState.Following) {
      return ((ElectionState.Following) state).leader().orElse(null);
    }
    return null;
  }

  private Optional<ElectionDescriptor.Term> term(ElectionState state) {
    Optional<LeadershipTerm> term;
    if (state instanceof ElectionState.Leading) {
      term = Optional.of(((ElectionState.Leading) state).term());
    } else if (state.kind() == ElectionState.Kind.NOT_CONTENDING) {
      term = election.currentTerm();
    } else {
      term = Optional.empty();
    }
    return term.map(t -> new ElectionDescriptor.Term(t.leaseTransitions(), t.acquireTime().toString(),
        t.isValid(), t.isElected()));
  }

  private static ElectionDescriptor.Lease lease(Optional<ElectionRunner> runner, LeaseSettings settings) {
    // The runner's resolved names once it started; before that, what the settings say.
    String namespace = runner.flatMap(ElectionRunner::namespace).orElse(settings.namespace().orElse(null));
    String name = runner.flatMap(ElectionRunner::leaseName).orElse(settings.leaseName());
    return new ElectionDescriptor.Lease(namespace, name, settings.leaseDuration().toMillis(),
        settings.renewDeadline().toMillis(), settings.retryPeriod().toMillis());
  }

  private static ElectionDescriptor.Decision decision(ElectionDecision decision) {
    return new ElectionDescriptor.Decision(decision.outcome().name(),
        decision.reasons().stream().map(Enum::name).collect(Collectors.toList()), decision.summary(),
        decision.warnings());
  }

  @Override
  public String toString() {
    return "ElectionEndpoint{" + election + ", " + history + "}";
  }
}
