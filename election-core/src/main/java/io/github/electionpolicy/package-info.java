/**
 * The contention decision: whether a controller process contends for its leader Lease, and why.
 *
 * <p>Start at {@link io.github.electionpolicy.ElectionPolicy}: it reads the kill switch ({@link
 * io.github.electionpolicy.KillSwitch}) and the process host ({@link io.github.electionpolicy.ProcessHost})
 * from an {@link io.github.electionpolicy.Environment}, combines them with the controller's {@link
 * io.github.electionpolicy.Substrate}, and returns an {@link io.github.electionpolicy.ElectionDecision}.
 * {@link io.github.electionpolicy.DecisionLog} logs it; {@link io.github.electionpolicy.Explain} prints it
 * for operators.
 *
 * <p>Everything here is pure and immutable: no I/O beyond the environment seam, no logging unless asked.
 */
package io.github.electionpolicy;
