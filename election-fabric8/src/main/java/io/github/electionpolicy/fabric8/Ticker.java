package io.github.electionpolicy.fabric8;

/** A monotonic nanosecond source; the seam through which tests could move time. */
@FunctionalInterface
interface Ticker {

  long read();

  static Ticker system() {
    return System::nanoTime;
  }
}
