package io.github.electionpolicy.testkit;

import io.github.electionpolicy.Substrate;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.providers.ArbitraryProvider;
import net.jqwik.api.providers.TypeUsage;

/**
 * Lets jqwik generate the testkit's types for plain {@code @ForAll} parameters, so that properties read
 * like the specification:
 *
 * <pre>{@code
 * @Property(generation = GenerationMode.EXHAUSTIVE)
 * void everyRow(@ForAll TruthTable.Row row) { ... }
 *
 * @Property
 * void everySpelling(@ForAll Scenario scenario) { ... }
 * }</pre>
 *
 * <table>
 *   <caption>What each parameter type is generated from</caption>
 *   <tr><th>Parameter type</th><th>Arbitrary</th></tr>
 *   <tr><td>{@link TruthTable.Row}</td><td>{@link ElectionArbitraries#rows()}</td></tr>
 *   <tr><td>{@link Scenario}</td><td>{@link ElectionArbitraries#scenarios()}</td></tr>
 *   <tr><td>{@link InvalidKillSwitchScenario}</td><td>{@link ElectionArbitraries#invalidKillSwitchScenarios()}</td></tr>
 *   <tr><td>{@link Substrate}</td><td>{@link ElectionArbitraries#substrates()}</td></tr>
 * </table>
 *
 * <p>jqwik finds this provider through {@code META-INF/services/net.jqwik.api.providers.ArbitraryProvider}
 * in the testkit's jar; there is nothing to register. Stateless and thread-safe.
 */
public final class ElectionArbitraryProvider implements ArbitraryProvider {

  private static final Map<Class<?>, Supplier<Arbitrary<?>>> ARBITRARIES = Map.of(
      TruthTable.Row.class, ElectionArbitraries::rows,
      Scenario.class, ElectionArbitraries::scenarios,
      InvalidKillSwitchScenario.class, ElectionArbitraries::invalidKillSwitchScenarios,
      Substrate.class, ElectionArbitraries::substrates);

  /** Creates the provider; jqwik calls this through the service loader. */
  public ElectionArbitraryProvider() {
    // Stateless: every arbitrary is built on demand.
  }

  @Override
  public boolean canProvideFor(TypeUsage targetType) {
    return ARBITRARIES.keySet().stream().anyMatch(targetType::isOfType);
  }

  @Override
  public Set<Arbitrary<?>> provideFor(TypeUsage targetType, SubtypeProvider subtypeProvider) {
    return ARBITRARIES.entrySet().stream()
        .filter(entry -> targetType.isOfType(entry.getKey()))
        .map(entry -> entry.getValue().get())
        .collect(java.util.stream.Collectors.toUnmodifiableSet());
  }
}
