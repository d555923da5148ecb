package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Keeps the module's shape as issue 16 left it: the public facade {@link ElectionRunner} under 400 lines, and no
 * main source file over 500, so that each stays a file one can read whole. A file that outgrows the bound is split
 * along a seam of its own (as {@code ElectorInputs} was taken out of {@code LeaseElector}), not squeezed.
 */
class SourceShapeTest {

  // The module's own directory, or election-fabric8-compat7's, which runs these tests from its sibling's sources.
  private static final Path MAIN = Stream.of(Path.of(""), Path.of("../election-fabric8"))
      .map(module -> module.resolve("src/main/java/io/github/electionpolicy/fabric8"))
      .filter(dir -> Files.isRegularFile(dir.resolve("ElectionRunner.java")))
      .findFirst().orElseThrow(() -> new IllegalStateException("election-fabric8's main sources not found"));

  @Test
  void theFacadeStaysUnder400Lines() {
    assertThat(lines(MAIN.resolve("ElectionRunner.java"))).isLessThan(400);
  }

  @Test
  void noMainFileIsOver500Lines() throws IOException {
    Map<String, Long> over = new TreeMap<>();
    try (Stream<Path> files = Files.list(MAIN)) {
      files.filter(f -> f.toString().endsWith(".java")).forEach(f -> {
        long count = lines(f);
        if (count > 500) {
          over.put(f.getFileName().toString(), count);
        }
      });
    }
    assertThat(over).as("main files over 500 lines").isEmpty();
  }

  private static long lines(Path file) {
    try (Stream<String> lines = Files.lines(file)) {
      return lines.count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
