package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testsupport.MarkdownBlocks;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** The Spring Boot 3.5 health indicators on docs/spring-boot.md are the ones this module compiles and runs. */
class Boot3DocsTest {

  private static final String START = "<!-- boot-3.5-health:start -->\n```java\n";
  private static final String END = "```\n<!-- boot-3.5-health:end -->";
  private static final Path SOURCE = Path.of(System.getProperty("basedir", "."))
      .resolve("src/test/java/io/github/electionpolicy/springboot/example/ElectionHealthIndicators.java");

  @Test
  void thePageShowsTheIndicatorsThisBuildRunsOnSpringBoot35() throws IOException {
    String page = Files.readString(Docs.PAGE, StandardCharsets.UTF_8);
    assertThat(MarkdownBlocks.between(page, START, END))
        .as("the Java block between the markers; copy %s there", SOURCE)
        .isEqualTo(Files.readString(SOURCE, StandardCharsets.UTF_8));
  }
}
