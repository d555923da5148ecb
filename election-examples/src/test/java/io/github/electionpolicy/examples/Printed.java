package io.github.electionpolicy.examples;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** What a tool printed to one stream, captured for assertions. */
final class Printed {

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  final PrintStream stream = new PrintStream(bytes, true, StandardCharsets.UTF_8);

  String text() {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return text();
  }
}
