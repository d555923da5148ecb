package io.github.electionpolicy.testkit.fabric8;

/** {@link MockServerRuntimeTest}'s child JVM: starts the embedded Lease API and prints what became of it. */
final class StartEmbeddedLeaseApi {

  private StartEmbeddedLeaseApi() {}

  public static void main(String[] args) {
    try (LeaseApi api = LeaseApi.builder().target(ApiServerTarget.embedded()).start()) {
      System.out.println("started: " + api.url());
    } catch (RuntimeException e) {
      System.out.println("refused: " + e.getClass().getName() + ": " + e.getMessage());
    }
    System.exit(0); // the mock server's threads would keep a failed JVM alive
  }
}
