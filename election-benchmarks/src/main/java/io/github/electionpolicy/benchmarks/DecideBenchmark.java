package io.github.electionpolicy.benchmarks;

import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.Substrate;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Time and allocation of one {@link ElectionPolicy#decide(Environment, Substrate)} call, and of its summary,
 * for a pod, an outside-pod process and a kill switch that is off. Run with {@code -prof gc} for allocation.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Benchmark)
public class DecideBenchmark {

  /** Which environment the decision reads. */
  @Param({"pod", "outside", "killSwitchOff"})
  public String scenario;

  private final ElectionPolicy policy = ElectionPolicy.defaults();
  private final Substrate substrate = Substrate.usingKubernetesApi("kubernetes");
  private Environment environment;

  /** Builds the environment for the scenario. */
  @Setup
  public void setUp() {
    environment = switch (scenario) {
      case "pod" -> Environment.of(Map.of(
          "KUBERNETES_SERVICE_HOST", "10.96.0.1", "KUBERNETES_SERVICE_PORT", "443"));
      case "outside" -> Environment.of(Map.of());
      case "killSwitchOff" -> Environment.of(Map.of("LEADER_ELECTION_ENABLED", "false"));
      default -> throw new IllegalArgumentException("unknown scenario " + scenario);
    };
  }

  /**
   * One decision.
   *
   * @return the decision, so the JIT cannot drop the work
   */
  @Benchmark
  public ElectionDecision decide() {
    return policy.decide(environment, substrate);
  }

  /**
   * One decision and its log line, which is what a controller does once at start-up.
   *
   * @return the summary
   */
  @Benchmark
  public String decideAndSummarise() {
    return policy.decide(environment, substrate).summary();
  }
}
