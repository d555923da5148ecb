package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** The fenced blocks of docs/spring-boot.md that the tests use or compare, each found after its marker line. */
final class Docs {

  /** The page, from this module's directory or from a sibling module's (the compat module reuses these tests). */
  static final Path PAGE = Path.of(System.getProperty("basedir", ".")).resolve("../docs/spring-boot.md").normalize();

  private Docs() {}

  static List<String> lines() {
    try {
      return Files.readAllLines(PAGE, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The lines of the first fenced block after the line containing {@code marker}, fences excluded. */
  static List<String> blockAfter(String marker) {
    List<String> page = lines();
    int at = -1;
    for (int i = 0; i < page.size() && at < 0; i++) {
      if (page.get(i).contains(marker)) {
        at = i;
      }
    }
    assertThat(at).as("a line containing \"%s\" in %s", marker, PAGE).isNotNegative();
    int open = at + 1;
    while (open < page.size() && !page.get(open).startsWith("```")) {
      open++;
    }
    int close = open + 1;
    while (close < page.size() && !page.get(close).equals("```")) {
      close++;
    }
    assertThat(close).as("a fenced block after \"%s\" in %s", marker, PAGE).isLessThan(page.size());
    return page.subList(open + 1, close);
  }

  /** A block written to a file under target/, e.g. to give Spring Boot as configuration. */
  static Path writeBlock(String marker, String fileName) {
    Path file = Path.of(System.getProperty("basedir", ".")).resolve("target").resolve(fileName);
    try {
      Files.createDirectories(file.getParent());
      Files.write(file, blockAfter(marker), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return file;
  }
}
