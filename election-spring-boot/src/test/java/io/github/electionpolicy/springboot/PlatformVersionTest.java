package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.fabric8.kubernetes.client.Version;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootVersion;
import org.springframework.core.SpringVersion;

/**
 * These tests run twice per build: in election-spring-boot on Spring Boot 4.0 and fabric8 8, and in
 * election-spring-boot-compat3 on Spring Boot 3.5 and fabric8 7. Each build names the versions it means in
 * system properties; a run on any other versions would prove nothing about them.
 */
class PlatformVersionTest {

  @Test
  void theTestsRunOnTheSpringBootTheBuildDeclares() {
    String expected = System.getProperty("spring-boot.expectedVersion");
    assumeTrue(expected != null && !expected.isBlank(), "run outside Maven: no version declared");

    assertThat(SpringBootVersion.getVersion()).isEqualTo(expected);
    // Spring Boot 4 is on Spring Framework 7, Spring Boot 3 on 6.
    assertThat(SpringVersion.getVersion()).startsWith(expected.startsWith("4.") ? "7." : "6.");
  }

  @Test
  void theTestsRunOnTheFabric8TheBuildDeclares() {
    String expected = System.getProperty("fabric8.expectedVersion");
    assumeTrue(expected != null && !expected.isBlank(), "run outside Maven: no version declared");

    assertThat(Version.clientVersion()).isEqualTo(expected);
  }
}
