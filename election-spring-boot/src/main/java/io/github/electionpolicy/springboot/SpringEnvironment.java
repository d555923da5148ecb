package io.github.electionpolicy.springboot;

import io.github.electionpolicy.Environment;
import java.util.Objects;
import java.util.Optional;

/**
 * The core's {@link Environment} read through Spring's: the kill switch, the pod variables and the identity
 * variables come from the process environment as Spring sees it, and can be given as properties too (on the
 * command line, in a test's property values). Thread-safe as Spring's environment is.
 */
final class SpringEnvironment implements Environment {

  private final org.springframework.core.env.Environment spring;

  SpringEnvironment(org.springframework.core.env.Environment spring) {
    this.spring = Objects.requireNonNull(spring, "spring");
  }

  @Override
  public Optional<String> get(String name) {
    Objects.requireNonNull(name, "name");
    return Optional.ofNullable(spring.getProperty(name));
  }

  @Override
  public String toString() {
    return "SpringEnvironment{" + spring + "}";
  }
}
