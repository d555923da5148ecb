package io.github.electionpolicy.benchmarks.failover;

import java.util.Objects;
import java.util.function.Function;

/**
 * Builds the replicas of one leader-election implementation; its name heads a column of the table.
 * The harness calls it from one thread; implementations need not be thread-safe.
 */
public interface ContenderFactory {

  /**
   * The column name, such as {@code stock} or {@code ours}.
   *
   * @return a short name
   */
  String name();

  /**
   * Builds one replica; it must not contact the server before {@link Contender#start()}.
   *
   * @param spec identity, Lease, timings, client and recorder of the replica
   * @return the replica
   */
  Contender create(ReplicaSpec spec);

  /**
   * A factory from a name and a constructor reference.
   *
   * @param name the column name
   * @param constructor builds one replica from its spec
   * @return the factory
   */
  static ContenderFactory of(String name, Function<ReplicaSpec, Contender> constructor) {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(constructor, "constructor");
    return new ContenderFactory() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public Contender create(ReplicaSpec spec) {
        return constructor.apply(spec);
      }
    };
  }
}
