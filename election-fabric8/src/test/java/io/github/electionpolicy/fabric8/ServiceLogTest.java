package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The overlap check the election tests rely on must itself fail on an overlapping history. */
class ServiceLogTest {

  private final ServiceLog log = new ServiceLog();

  @Test
  void overlapIsFoundWhenAReplicaWithTwoReconcilersStillRunsOneOfThem() {
    log.add("a", ServiceLog.Kind.START, 1);
    log.add("a", ServiceLog.Kind.START, 2);
    // a's second reconciler stopped; its first still runs when b starts.
    log.add("a", ServiceLog.Kind.STOP, 3);
    log.add("b", ServiceLog.Kind.START, 4);
    log.add("a", ServiceLog.Kind.STOP, 5);

    assertThat(log.overlap()).hasValueSatisfying(o -> assertThat(o).startsWith("b started while a still ran"));
  }

  @Test
  void overlapIsFoundWhenTheLaterReplicaStartsFirstInTime() {
    log.add("b", ServiceLog.Kind.START, 10);
    log.add("b", ServiceLog.Kind.START, 11);
    log.add("a", ServiceLog.Kind.START, 5);
    log.add("a", ServiceLog.Kind.STOP, 12);

    assertThat(log.overlap()).isPresent();
  }

  @Test
  void noOverlapWhenEveryReconcilerOfOneReplicaStoppedBeforeTheNextStarts() {
    log.add("a", ServiceLog.Kind.START, 1);
    log.add("a", ServiceLog.Kind.START, 2);
    log.add("a", ServiceLog.Kind.STOP, 3);
    log.add("a", ServiceLog.Kind.STOP, 4);
    log.add("b", ServiceLog.Kind.START, 5);
    log.add("b", ServiceLog.Kind.START, 6);
    log.add("b", ServiceLog.Kind.STOP, 7);
    log.add("b", ServiceLog.Kind.STOP, 8);
    log.add("a", ServiceLog.Kind.START, 9);

    assertThat(log.overlap()).isEmpty();
  }
}
