/**
 * A test fixture for fabric8 controllers that use leader election: add {@code election-testkit-fabric8} in
 * test scope and register {@link io.github.electionpolicy.testkit.fabric8.LeaseApiExtension} in a JUnit 5
 * test.
 *
 * <p>Each test gets a {@link io.github.electionpolicy.testkit.fabric8.LeaseApi}: fabric8's mock API server in
 * CRUD mode on a loopback port (it enforces {@code resourceVersion} conflicts and answers
 * SelfSubjectAccessReviews), one client per replica through a {@link
 * io.github.electionpolicy.testkit.fabric8.ReplicaLink} whose proxy the test can cut, and every Lease write
 * the server accepted as a {@link io.github.electionpolicy.testkit.fabric8.LeaseWrite}. With {@code
 * -Delection.it.kubeconfig=PATH} the same tests run against a real API server ({@link
 * io.github.electionpolicy.testkit.fabric8.ApiServerTarget}). The module does not depend on
 * {@code election-fabric8}. For tests that span processes, {@link
 * io.github.electionpolicy.testkit.fabric8.ServeLeaseApi} serves the embedded Lease API from a JVM of its own,
 * with a kubeconfig for the controllers' JVMs and a wall-clock log of every Lease write.
 *
 * <p>Everything here is thread-safe; {@link io.github.electionpolicy.testkit.fabric8.LeaseApi.Builder} is not.
 */
package io.github.electionpolicy.testkit.fabric8;
