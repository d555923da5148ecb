package io.github.electionpolicy.micrometer;

import com.google.common.testing.NullPointerTester;
import org.junit.jupiter.api.Test;

/** The public API rejects null everywhere, naming the parameter (guava-testlib). */
class ElectionMetricsContractTest {

  @Test
  void everyPublicConstructorAndMethodRejectsNull() {
    NullPointerTester tester = new NullPointerTester();

    tester.testAllPublicConstructors(ElectionMetrics.class);
    tester.testAllPublicStaticMethods(ElectionMetrics.class);
    tester.testAllPublicInstanceMethods(new ElectionMetrics());
  }
}
