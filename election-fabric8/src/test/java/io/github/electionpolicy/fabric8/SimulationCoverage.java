package io.github.electionpolicy.fabric8;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.jacoco.core.analysis.Analyzer;
import org.jacoco.core.analysis.CoverageBuilder;
import org.jacoco.core.analysis.IClassCoverage;
import org.jacoco.core.data.ExecutionDataReader;
import org.jacoco.core.data.ExecutionDataStore;
import org.jacoco.core.data.SessionInfoStore;

/**
 * What the simulation covered of the production classes, measured by the JaCoCo agent that the build attaches to
 * the simulation's own test JVM (and to nothing else), read back while the JVM still runs. Empty without the
 * agent (a run from an IDE, or with JaCoCo skipped).
 */
final class SimulationCoverage {

  /**
   * The runner: every production class the simulation drives, except the protocol, counted on its own, and the log
   * lines (LeaseLog, RunnerLog), which are off in the simulation's JVM.
   */
  static final List<String> RUNNER = List.of("ElectionRunner", "RunnerLifecycle", "RunnerLifecycleState",
      "RunnerLifecycleClosing", "RunnerLifecycleLoss", "RunnerLifecycleStopping", "RunnerLifecycleEnding",
      "RunnerLifecyclePhase", "RunnerLifecycleInput", "RunnerLifecycleCommand", "RunnerLifecycleConfig",
      "RunnerLifecycleServices", "RunnerLifecycleLines", "LifecycleDriver",
      "LifecycleCommands", "ElectorEvents", "RunnerCallbacks", "RunnerAssembly", "LeaseElector",
      "FollowerWatch", "CallbackLane",
      "ServiceSequence", "LeadershipTerm", "WriteGateInterceptor", "HealthRule", "RunnerView");

  static final List<String> PROTOCOL = List.of("LeaseProtocol", "LeaseProtocolState", "LeaseProtocolAcquiring",
      "LeaseProtocolRenewing", "LeaseProtocolReleasing");

  /**
   * The sharded runner around the per-Lease runners: every class of it the sharding simulations ({@code
   * SimulationSharding*}) drive, which the election's simulations never load. Not {@code ShardLeaseSource}, fabric8's
   * informer, which the simulation replaces by its own list and watch (through {@code ShardViewSource}).
   */
  static final List<String> SHARDING = List.of("ShardedRunner", "ShardAssembly", "ShardCoordinator",
      "ShardCoordinatorCommand", "ShardCoordinatorInput", "ShardCoordinatorPhase", "ShardDriver", "ShardHandOvers",
      "ShardLeaseRunners", "ShardLeaseView", "ShardLeases", "ShardListeners", "ShardPlanner", "ShardViewFeed",
      "ShardWork", "LeavingMark", "OwnWrites", "Shards");

  private SimulationCoverage() {}

  /** Covered and total lines of {@code classes} (and their nested classes), if the agent runs. */
  static Optional<long[]> lines(List<String> classes) {
    byte[] data;
    try {
      Class<?> rt = Class.forName("org.jacoco.agent.rt.RT");
      Object agent = rt.getMethod("getAgent").invoke(null);
      data = (byte[]) agent.getClass().getMethod("getExecutionData", boolean.class).invoke(agent, false);
    } catch (ReflectiveOperationException | IllegalStateException e) {
      return Optional.empty();
    }
    try {
      ExecutionDataStore executions = new ExecutionDataStore();
      ExecutionDataReader reader = new ExecutionDataReader(new ByteArrayInputStream(data));
      reader.setExecutionDataVisitor(executions);
      reader.setSessionInfoVisitor(new SessionInfoStore());
      reader.read();
      CoverageBuilder coverage = new CoverageBuilder();
      Analyzer analyzer = new Analyzer(executions, coverage);
      Path dir = Path.of(ElectionRunner.class.getProtectionDomain().getCodeSource().getLocation().toURI())
          .resolve("io/github/electionpolicy/fabric8");
      if (!Files.isDirectory(dir)) {
        return Optional.empty(); // classes from a jar (another module's run): not measured
      }
      try (Stream<Path> files = Files.list(dir)) {
        for (Path file : (Iterable<Path>) files::iterator) {
          String name = file.getFileName().toString();
          String outer = name.replaceAll("(\\$.*)?\\.class$", "");
          if (name.endsWith(".class") && classes.contains(outer)) {
            try (InputStream in = Files.newInputStream(file)) {
              analyzer.analyzeClass(in, name);
            }
          }
        }
      }
      long covered = 0;
      long total = 0;
      for (IClassCoverage c : coverage.getClasses()) {
        covered += c.getLineCounter().getCoveredCount();
        total += c.getLineCounter().getTotalCount();
      }
      return Optional.of(new long[] {covered, total});
    } catch (IOException | URISyntaxException e) {
      throw new IllegalStateException("reading the simulation's coverage failed", e);
    }
  }

  /** Per class, for a report: {@code Name covered/total}. */
  static String perClass(List<String> classes) {
    StringBuilder out = new StringBuilder();
    for (String c : classes) {
      lines(List.of(c)).ifPresent(l -> out.append(c).append(' ').append(l[0]).append('/').append(l[1]).append(' '));
    }
    return out.toString().trim();
  }

  static String percent(Optional<long[]> lines) {
    return lines.map(l -> l[1] == 0 ? "n/a" : (100 * l[0] / l[1]) + "%").orElse("unmeasured");
  }
}
