package io.github.electionpolicy;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/** A fixed environment backed by an immutable map. Thread-safe. */
final class MapEnvironment implements Environment {
  private final Map<String, String> variables;

  MapEnvironment(Map<String, String> variables) {
    this.variables = variables;
  }

  @Override
  public Optional<String> get(String name) {
    Objects.requireNonNull(name, "name");
    return Optional.ofNullable(variables.get(name));
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof MapEnvironment && ((MapEnvironment) other).variables.equals(variables);
  }

  @Override
  public int hashCode() {
    return variables.hashCode();
  }

  @Override
  public String toString() {
    return "Environment.of(" + new TreeMap<>(variables) + ")";
  }
}
