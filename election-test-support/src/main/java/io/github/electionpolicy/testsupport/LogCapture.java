package io.github.electionpolicy.testsupport;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Captures what the tests' SLF4J binding (slf4j-simple, which looks up {@code System.err} on every call) writes
 * while it is open, and still passes it through, so a test can assert that something was logged.
 *
 * <pre>{@code
 * try (LogCapture captured = new LogCapture()) {
 *   runner.close();
 *   assertThat(captured.text()).contains("Released Lease");
 * }
 * }</pre>
 *
 * <p>Its {@link #text()} may be read from any thread; opening two at once is not supported (the second would
 * capture into the first), so tests that use it run one at a time.
 */
public final class LogCapture implements AutoCloseable {

  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  /** Starts capturing {@code System.err}. */
  public LogCapture() {
    OutputStream tee = new OutputStream() {
      @Override
      public void write(int b) {
        original.write(b);
        synchronized (captured) {
          captured.write(b);
        }
      }

      @Override
      public void write(byte[] b, int off, int len) {
        original.write(b, off, len);
        synchronized (captured) {
          captured.write(b, off, len);
        }
      }
    };
    System.setErr(new PrintStream(tee, true, StandardCharsets.UTF_8));
  }

  /**
   * What was written since this capture opened.
   *
   * @return the text, UTF-8 decoded
   */
  public String text() {
    synchronized (captured) {
      return captured.toString(StandardCharsets.UTF_8);
    }
  }

  /** Gives {@code System.err} back to what it was. */
  @Override
  public void close() {
    System.err.flush();
    System.setErr(original);
  }
}
