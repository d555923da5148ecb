package io.github.electionpolicy.springboot;

import io.github.electionpolicy.testsupport.MarkdownBlocks;
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
    return MarkdownBlocks.blockAfter(lines(), marker, "");
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
