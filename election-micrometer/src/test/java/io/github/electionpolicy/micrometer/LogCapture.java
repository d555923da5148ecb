package io.github.electionpolicy.micrometer;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Captures what the tests' SLF4J binding (slf4j-simple, which looks up {@code System.err} on every call)
 * writes while it is open, and still passes it through. Not thread-safe to open twice at once.
 */
final class LogCapture implements AutoCloseable {

  private final PrintStream original = System.err;
  private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

  LogCapture() {
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

  String text() {
    synchronized (captured) {
      return captured.toString(StandardCharsets.UTF_8);
    }
  }

  @Override
  public void close() {
    System.err.flush();
    System.setErr(original);
  }
}
