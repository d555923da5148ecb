package io.github.electionpolicy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Holds every main source file of the project, in every module and example under the repository's root, to at most
 * {@value #MAX_LINES} lines: a file one can read whole. A file that outgrows the bound is split along a seam of its own
 * (as {@code RunnerCallbackThreads} and {@code RunnerStopWaits} were taken out of {@code ElectionLifecycle}, and
 * {@code Lanes}, {@code RunsHere} and {@code Refeeds} out of {@code LaneExecutor}), not
 * squeezed. election-fabric8's {@code SourceShapeTest} holds the same bound for that module alone, with its facade's
 * own; this one, in the core module the library builds on, holds it for all of them.
 *
 * <p>A file that cannot be split yet is named in {@link #OVER_THE_BOUND}, with the reason and the size it may not
 * outgrow; an entry fails the test once its file is back within the bound or gone, so that none outlives its reason.
 */
class ProjectSourceShapeTest {

  private static final int MAX_LINES = 500;

  /** A main source file allowed over the bound for now: its path from the root, its size at most, and why. */
  record OverTheBound(String path, long atMost, String reason) { }

  /** The files over the bound, each with its reason; empty when every file is within it. */
  static final List<OverTheBound> OVER_THE_BOUND = List.of();

  private static final Path ROOT = root();

  @Test
  void noMainFileIsOverTheBoundUnlessNamedWithItsReason() {
    Map<String, Long> allowed = OVER_THE_BOUND.stream()
        .collect(Collectors.toMap(OverTheBound::path, OverTheBound::atMost));
    Map<String, Long> over = new TreeMap<>();
    mainFiles().forEach((path, lines) -> {
      if (lines > allowed.getOrDefault(path, (long) MAX_LINES)) {
        over.put(path, lines);
      }
    });
    assertThat(over)
        .as("main source files over %d lines (split each along a seam of its own; an entry of OVER_THE_BOUND "
            + "allows a file only up to its size then)", MAX_LINES)
        .isEmpty();
  }

  @Test
  void everyNamedExceptionIsStillOverTheBound() {
    Map<String, Long> files = mainFiles();
    for (OverTheBound exception : OVER_THE_BOUND) {
      assertThat(exception.reason()).as("the reason of %s", exception.path()).isNotBlank();
      assertThat(files).as("%s, named in OVER_THE_BOUND", exception.path()).containsKey(exception.path());
      assertThat(files.get(exception.path()))
          .as("%s is within %d lines now: take it out of OVER_THE_BOUND", exception.path(), MAX_LINES)
          .isGreaterThan(MAX_LINES);
    }
  }

  @Test
  void theWalkSeesEveryModule() {
    // A root found wrong would pass the bound vacuously: the walk must see the modules' main sources.
    assertThat(mainFiles().keySet())
        .anyMatch(path -> path.startsWith("election-core/src/main/java/"))
        .anyMatch(path -> path.startsWith("election-fabric8/src/main/java/"))
        .anyMatch(path -> path.startsWith("election-josdk/src/main/java/"))
        .anyMatch(path -> path.startsWith("election-spring-boot/src/main/java/"))
        .anyMatch(path -> path.startsWith("examples/quickstart/src/main/java/"));
  }

  /** Every {@code .java} file under a {@code src/main/java} of the repository, by its path from the root. */
  private static Map<String, Long> mainFiles() {
    try (Stream<Path> files = Files.walk(ROOT)) {
      return files
          .filter(file -> file.toString().endsWith(".java") && Files.isRegularFile(file))
          .map(ROOT::relativize)
          .filter(ProjectSourceShapeTest::isMainSource)
          .collect(Collectors.toMap(file -> file.toString().replace('\\', '/'), file -> lines(ROOT.resolve(file)),
              (a, b) -> a, TreeMap::new));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Under a {@code src/main/java}, and not under a build's output or a hidden directory. */
  private static boolean isMainSource(Path relative) {
    String path = relative.toString().replace('\\', '/');
    return path.contains("src/main/java/")
        && Stream.of(path.split("/")).noneMatch(part -> part.equals("target") || part.startsWith("."));
  }

  /** The repository's root: the nearest directory up from this module's whose pom lists election-core. */
  private static Path root() {
    Path module = Path.of(System.getProperty("basedir", "")).toAbsolutePath().normalize();
    return Stream.iterate(module, dir -> dir != null, Path::getParent)
        .filter(dir -> read(dir.resolve("pom.xml")).contains("<module>election-core</module>"))
        .findFirst()
        .orElseThrow(() -> new IllegalStateException("the repository's root pom not found above " + module));
  }

  private static String read(Path file) {
    try {
      return Files.isRegularFile(file) ? Files.readString(file) : "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static long lines(Path file) {
    try (Stream<String> lines = Files.lines(file)) {
      return lines.count();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
