package io.github.electionpolicy.benchmarks.failover;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class DistributionTest {

  @Test
  void medianAndP95UseTheNearestRank() {
    List<Double> oneToTwenty = IntStream.rangeClosed(1, 20).mapToObj(i -> (double) i).toList();

    Distribution d = Distribution.of(oneToTwenty);

    assertThat(d.median()).isEqualTo(10.0);
    assertThat(d.p95()).isEqualTo(19.0);
    assertThat(d.count()).isEqualTo(20);
  }

  @Test
  void p95OfFewerThanTwentyValuesIsTheMaximum() {
    Distribution d = Distribution.of(List.of(3.0, 1.0, 2.0, 5.0, 4.0));

    assertThat(d.median()).isEqualTo(3.0);
    assertThat(d.p95()).isEqualTo(5.0);
    assertThat(d.min()).isEqualTo(1.0);
  }

  @Test
  void anEmptySampleIsRejected() {
    assertThatIllegalArgumentException().isThrownBy(() -> Distribution.of(List.of()))
        .withMessageContaining("at least one value");
  }
}
