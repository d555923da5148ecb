package io.github.electionpolicy.benchmarks.failover;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The implementations this build can compare, by column name. Stateless and thread-safe. */
public final class Contenders {

  private Contenders() {}

  /**
   * Every implementation on the class path, the baseline first.
   *
   * @return the factories by name, in column order
   */
  public static Map<String, ContenderFactory> available() {
    Map<String, ContenderFactory> all = new LinkedHashMap<>();
    for (ContenderFactory factory : List.of(StockLeaderElectorContender.FACTORY, ElectionRunnerContender.FACTORY)) {
      all.put(factory.name(), factory);
    }
    return all;
  }
}
