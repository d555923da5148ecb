package io.github.electionpolicy.benchmarks.failover;

import java.util.Collection;

/**
 * Median and 95th percentile of a sample, by the nearest-rank method: the p-th percentile is the smallest
 * value with at least p % of the sample at or below it, so with fewer than 20 values the 95th percentile is
 * the maximum. Immutable and thread-safe.
 *
 * @param count how many values
 * @param median the 50th percentile
 * @param p95 the 95th percentile
 * @param min the smallest value
 * @param max the largest value
 */
public record Distribution(int count, double median, double p95, double min, double max) {

  /**
   * Summarises a non-empty sample.
   *
   * @param values the sample
   * @return its distribution
   * @throws IllegalArgumentException when the sample is empty
   */
  public static Distribution of(Collection<Double> values) {
    if (values.isEmpty()) {
      throw new IllegalArgumentException("values is empty: a distribution needs at least one value");
    }
    double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return new Distribution(sorted.length, rank(sorted, 50), rank(sorted, 95), sorted[0], sorted[sorted.length - 1]);
  }

  private static double rank(double[] sorted, int percentile) {
    int rank = (int) Math.ceil(percentile / 100.0 * sorted.length);
    return sorted[Math.max(1, rank) - 1];
  }
}
