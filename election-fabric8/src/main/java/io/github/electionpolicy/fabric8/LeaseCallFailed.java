package io.github.electionpolicy.fabric8;

/** A Lease request that failed, timed out or was refused; {@link #code()} is the HTTP status, 0 if none. */
final class LeaseCallFailed extends Exception {
  private static final long serialVersionUID = 1L;

  static final int FORBIDDEN = 403;
  static final int CONFLICT = 409;
  static final int NOT_FOUND = 404;

  private final int code;

  LeaseCallFailed(String message, Throwable cause, int code) {
    super(message, cause);
    this.code = code;
  }

  int code() {
    return code;
  }

  boolean isConflict() {
    return code == CONFLICT;
  }

  boolean isNotFound() {
    return code == NOT_FOUND;
  }
}
