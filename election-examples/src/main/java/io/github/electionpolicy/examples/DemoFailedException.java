package io.github.electionpolicy.examples;

/**
 * The demo could not show what it promised: no leader or no take-over within its bound, the Lease access
 * denied, the API server unreachable. The message says what happened and what to check.
 *
 * <p>Immutable and thread-safe.
 */
final class DemoFailedException extends Exception {
  private static final long serialVersionUID = 1L;

  DemoFailedException(String message) {
    super(message);
  }

  DemoFailedException(String message, Throwable cause) {
    super(message, cause);
  }
}
