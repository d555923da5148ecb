package io.github.electionpolicy.fabric8;

/** A monotonic nanosecond source; the seam through which tests could move time. */
@FunctionalInterface
interface Ticker {

  long read();

  static Ticker system() {
    return SystemTicker.INSTANCE;
  }

  /**
   * {@link System#nanoTime()}, as a {@link Ticker} and as the {@link java.util.function.LongSupplier} the shared
   * pools time their spills with: one class for what were four method references, each a class spun at its first
   * use in a fresh JVM's first {@code start()} (issue 16). Stateless, thread-safe.
   */
  final class SystemTicker implements Ticker, java.util.function.LongSupplier {
    static final SystemTicker INSTANCE = new SystemTicker();

    private SystemTicker() {}

    @Override
    public long read() {
      return System.nanoTime();
    }

    @Override
    public long getAsLong() {
      return System.nanoTime();
    }
  }
}
