/**
 * Runnable examples of election-policy, not a library: {@link io.github.electionpolicy.examples.Demo}, the
 * one-command demo that runs three controller replicas against an embedded fabric8 mock API server and shows
 * election, graceful take-over and crash take-over with measured times; and {@link
 * io.github.electionpolicy.examples.ExplainCluster}, the operator tool that explains the election decision and,
 * when the process would contend, checks the Lease's namespace, the API server and RBAC without changing the
 * Lease. (The README's quickstart in CI serves the embedded API server to its controller with
 * election-testkit-fabric8's {@code ServeLeaseApi}, from this module's class path.)
 *
 * <p>The demo and the operator tool are also callable as methods that take the command-line options and print streams and return the
 * exit status, so tests and other tools can run them without exiting the JVM.
 */
package io.github.electionpolicy.examples;
