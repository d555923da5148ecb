package io.github.electionpolicy.fabric8;

import java.util.Objects;

/** What a runner's {@link RunnerLifecycle} is fixed to at start. */
record RunnerLifecycleConfig(boolean contends, boolean preflight, LossPolicy.Kind policy, String lease,
    String stopTimeout, RunnerFlaw flaw) {
  RunnerLifecycleConfig(boolean contends, boolean preflight, LossPolicy.Kind policy, String lease, String stopTimeout) {
    this(contends, preflight, policy, lease, stopTimeout, RunnerFlaw.NONE);
  }

  RunnerLifecycleConfig {
    Objects.requireNonNull(flaw, "flaw");
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(lease, "lease");
    Objects.requireNonNull(stopTimeout, "stopTimeout");
  }
}
