package io.github.electionpolicy;

import io.github.electionpolicy.ElectionDecision.Outcome;
import io.github.electionpolicy.ElectionDecision.Reason;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;

/** The decision rule and the words that explain it, in one place. Stateless. */
final class DecisionRule {
  private DecisionRule() {}

  static Outcome outcome(KillSwitch killSwitch, ProcessHost processHost, Substrate substrate) {
    if (!killSwitch.electionEnabled()) {
      return Outcome.RUN_UNELECTED;
    }
    return processHost.isPod() || substrate.usesKubernetesApi() ? Outcome.CONTEND : Outcome.RUN_UNELECTED;
  }

  static Set<Reason> reasons(KillSwitch killSwitch, ProcessHost processHost, Substrate substrate) {
    if (!killSwitch.electionEnabled()) {
      return Collections.unmodifiableSet(EnumSet.of(Reason.KILL_SWITCH_OFF));
    }
    EnumSet<Reason> reasons = EnumSet.noneOf(Reason.class);
    if (processHost.isPod()) {
      reasons.add(Reason.IN_KUBERNETES_POD);
    }
    if (substrate.usesKubernetesApi()) {
      reasons.add(Reason.SUBSTRATE_USES_KUBERNETES_API);
    }
    if (reasons.isEmpty()) {
      reasons.add(Reason.OUTSIDE_POD_WITHOUT_KUBERNETES_API);
    }
    return Collections.unmodifiableSet(reasons);
  }

  static void requireOutcome(
      Outcome expected, KillSwitch killSwitch, ProcessHost processHost, Substrate substrate) {
    Objects.requireNonNull(killSwitch, "killSwitch");
    Objects.requireNonNull(processHost, "processHost");
    Objects.requireNonNull(substrate, "substrate");
    Outcome actual = outcome(killSwitch, processHost, substrate);
    if (actual != expected) {
      throw new IllegalArgumentException(
          "inputs lead to " + actual + ", not " + expected + ": " + killSwitch.describe() + ", host "
              + processHost.kind() + ", substrate " + substrate
              + "; use ElectionDecision.of(...) to apply the rule");
    }
  }

  static String summary(ElectionDecision decision) {
    Set<Reason> reasons = decision.reasons();
    String substrate = "substrate " + Text.quote(decision.substrate().name());
    if (reasons.contains(Reason.KILL_SWITCH_OFF)) {
      return "Running reconcilers WITHOUT leader election because the kill switch "
          + decision.killSwitch().describe() + " turned election off (it overrides the host and the "
          + "substrate); this is only safe with one replica.";
    }
    if (reasons.contains(Reason.OUTSIDE_POD_WITHOUT_KUBERNETES_API)) {
      return "Running reconcilers without leader election because the process runs outside a Kubernetes "
          + "pod (" + ProcessHost.SERVICE_HOST_VARIABLE + " and " + ProcessHost.SERVICE_PORT_VARIABLE
          + " are not both set) and " + substrate + " does not use the Kubernetes API; run one replica.";
    }
    StringBuilder why = new StringBuilder("Contending for the leader Lease because ");
    if (reasons.contains(Reason.IN_KUBERNETES_POD)) {
      why.append("the process runs in a Kubernetes pod (")
          .append(ProcessHost.SERVICE_HOST_VARIABLE).append(" and ")
          .append(ProcessHost.SERVICE_PORT_VARIABLE).append(" are set)");
      if (reasons.contains(Reason.SUBSTRATE_USES_KUBERNETES_API)) {
        why.append(" and ");
      }
    }
    if (reasons.contains(Reason.SUBSTRATE_USES_KUBERNETES_API)) {
      why.append(substrate).append(" uses the Kubernetes API");
    }
    return why.append("; election is on (").append(decision.killSwitch().describe()).append(").")
        .toString();
  }
}
