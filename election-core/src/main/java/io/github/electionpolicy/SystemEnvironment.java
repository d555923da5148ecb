package io.github.electionpolicy;

import java.util.Objects;
import java.util.Optional;

/** The real process environment. Stateless and thread-safe. */
enum SystemEnvironment implements Environment {
  INSTANCE;

  @Override
  public Optional<String> get(String name) {
    Objects.requireNonNull(name, "name");
    return Optional.ofNullable(System.getenv(name));
  }

  @Override
  public String toString() {
    return "Environment.system()";
  }
}
