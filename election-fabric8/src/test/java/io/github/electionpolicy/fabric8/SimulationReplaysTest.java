package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.SimSchedule.Crash;
import io.github.electionpolicy.fabric8.SimSchedule.Direction;
import io.github.electionpolicy.fabric8.SimSchedule.Partition;
import io.github.electionpolicy.fabric8.SimSchedule.ReplicaSpec;
import io.github.electionpolicy.fabric8.SimSchedule.Pause;
import io.github.electionpolicy.fabric8.SimSchedule.Then;
import io.github.electionpolicy.fabric8.SimSchedule.HandOverClose;
import io.github.electionpolicy.fabric8.SimSchedule.LeaderTrouble;
import io.github.electionpolicy.fabric8.SimSchedule.FailingTakeover;
import io.github.electionpolicy.fabric8.SimSchedule.LoopFault;
import io.github.electionpolicy.fabric8.SimSchedule.LoopFaultKind;
import io.github.electionpolicy.fabric8.SimSchedule.Trouble;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the simulation found, each as a schedule that replays it. Not protocol defects: {@link LeaseProtocol}
 * passed every generated schedule. This one is in the runner ({@link ElectionRunner} on main).
 */
class SimulationReplaysTest {

  private static final ReplicaSpec REPLICA =
      new ReplicaSpec(11, 6798, 1409, 225, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);

  private static final ReplicaSpec FAST =
      new ReplicaSpec(4, 2500, 500, 300, LossPolicy.Kind.RECONTEND, 2, 0, 0, false);

  private static SimSchedule threeReplicas(long seed, SimSchedule.Fault fault) {
    return new SimSchedule(seed, List.of(FAST, FAST, FAST), List.of(fault), 20_000, 20);
  }

  /**
   * A defect the simulation found in the old runner, fixed since: after a service failed to start, the runner
   * relinquished the term without ending it, so {@code term.isValid()} stayed true while the release was in
   * flight; once the server had applied the release, another replica could be elected before the answer came
   * back. {@link ServiceSequence} ends the term as soon as a start fails; {@link RunnerFlaw#FAILED_START_TERM_LEFT_VALID}
   * puts the old rule back into the real runner, and a take-over whose starts fail with slow answers shows it.
   */
  @Test
  void aFailedStartsTermEndsBeforeItsReleaseCanFreeTheLease() {
    SimSchedule schedule = threeReplicas(65, new FailingTakeover(5000, 5000, 400));

    assertThat(Simulator.run(schedule, SimVariant.FAILED_START_TERM_LEFT_VALID).invariants().violations())
        .as("%s", schedule).anyMatch(v -> v.startsWith("VALID_AT_OTHERS_ELECTION: replica-0's term"));
    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).isEmpty();
  }

  /** Each of the runner's broken variants, shown by one literal schedule that the real runner passes. */
  @Test
  void eachBrokenRunnerVariantFailsALiteralScheduleTheRealRunnerPasses() {
    Map<SimVariant, SimSchedule> shown = new EnumMap<>(SimVariant.class);
    SimSchedule hungClose = threeReplicas(1, new LeaderTrouble(5000, 4000, Trouble.STOP_HANGS, Then.CLOSE));
    shown.put(SimVariant.RELEASE_BEFORE_STOP, hungClose);
    shown.put(SimVariant.RELEASE_AFTER_HUNG_STOP, hungClose);
    shown.put(SimVariant.START_WHILE_CLOSING, threeReplicas(1, new HandOverClose(5000, 10, 0)));
    shown.put(SimVariant.FAILED_START_TERM_LEFT_VALID, threeReplicas(65, new FailingTakeover(5000, 5000, 400)));
    shown.put(SimVariant.TERM_VALID_UNTIL_ENDED, threeReplicas(4, new Pause(0, 5000, 6000)));
    shown.put(SimVariant.GATE_CHECKS_ENDED_ONLY, threeReplicas(4, new Pause(0, 5000, 6000)));
    ReplicaSpec custom = new ReplicaSpec(4, 2500, 500, 300, LossPolicy.Kind.CUSTOM, 2, 0, 0, false);
    shown.put(SimVariant.LOSS_HANDLER_BEFORE_STOP, new SimSchedule(1, List.of(custom, custom, custom),
        List.of(new LeaderTrouble(5000, 4000, Trouble.STOP_THROWS_EXCEPTION, Then.PARTITION)), 20_000, 20));
    shown.put(SimVariant.HANDLER_FAILURE_RECONTENDS, new SimSchedule(7, List.of(custom, custom, custom),
        List.of(new Partition(0, 4000, 3000, Direction.BOTH), new Partition(1, 8000, 3000, Direction.BOTH),
            new Partition(2, 12000, 3000, Direction.BOTH), new Partition(0, 16000, 3000, Direction.BOTH)),
        20_000, 20));
    shown.put(SimVariant.PREFLIGHT_DENIAL_IGNORED, new SimSchedule(3, List.of(FAST, FAST, FAST),
        List.of(new Crash(0, 3000, 100), new Crash(1, 6000, 100), new Crash(2, 9000, 100), new Crash(0, 12000, 100)),
        20_000, 20));
    shown.put(SimVariant.FAILURE_LEAVES_SERVICES, new SimSchedule(1, List.of(FAST, FAST, FAST),
        List.of(new LoopFault(0, 5000, LoopFaultKind.TRANSPORT_THROWS_EXCEPTION, 1),
            new LoopFault(1, 5000, LoopFaultKind.TRANSPORT_THROWS_EXCEPTION, 1),
            new LoopFault(2, 5000, LoopFaultKind.TRANSPORT_THROWS_EXCEPTION, 1)), 20_000, 20));
    shown.put(SimVariant.UNELECTED_FAILED_START_LEAVES_SERVICES, new SimSchedule(2,
        List.of(FAST, FAST, FAST.asUnelected()),
        List.of(new SimSchedule.ReconcilerTrouble(2, 0, 15000, Trouble.START_THROWS_EXCEPTION)), 20_000, 20));
    shown.put(SimVariant.HUNG_STOP_LOOKS_LIVE, hungClose);
    shown.put(SimVariant.LISTENER_FAILURE_ENDS_DISPATCH, threeReplicas(2, new Pause(0, 5000, 6000)));
    for (Map.Entry<SimVariant, SimSchedule> e : shown.entrySet()) {
      assertThat(Simulator.run(e.getValue(), SimVariant.REAL).invariants().violations())
          .as("the real runner under %s", e.getValue()).isEmpty();
      assertThat(Simulator.run(e.getValue(), e.getKey()).invariants().passed())
          .as("%s under %s", e.getKey(), e.getValue()).isFalse();
    }
    // The invariants added for the runner's own paths, each failing on the variant written to break it.
    Map<SimVariant, String> caughtBy = Map.of(
        SimVariant.LOSS_HANDLER_BEFORE_STOP, "LOSS_HANDLER_EARLY: ",
        SimVariant.HANDLER_FAILURE_RECONTENDS, "CONTENDED_WHEN_IT_MAY_NOT: ",
        SimVariant.PREFLIGHT_DENIAL_IGNORED, "CONTENDED_WHEN_IT_MAY_NOT: ",
        SimVariant.FAILURE_LEAVES_SERVICES, "RUNNING_AFTER_STOPPED: ",
        SimVariant.UNELECTED_FAILED_START_LEAVES_SERVICES, "UNELECTED_START: ",
        SimVariant.HUNG_STOP_LOOKS_LIVE, "LIVE_AFTER_HUNG_STOP: ",
        SimVariant.LISTENER_FAILURE_ENDS_DISPATCH, "LISTENER_MISSED_STATE: ");
    for (Map.Entry<SimVariant, String> e : caughtBy.entrySet()) {
      assertThat(Simulator.run(shown.get(e.getKey()), e.getKey()).invariants().violations())
          .as("%s under %s", e.getKey(), shown.get(e.getKey())).anyMatch(v -> v.startsWith(e.getValue()));
    }
  }

  /**
   * Found by the generated schedules: a failing take-over just before the quiet tail; its churn of failed terms
   * reached into the tail, where the load excuse had already ended. The excuse now lasts as long as the churn can.
   */
  @Test
  void aFailingTakeOverAtTheEndOfTheFaultsIsExcusedUntilItsChurnEnds() {
    ReplicaSpec quick = new ReplicaSpec(1, 700, 116, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);
    ReplicaSpec slow = new ReplicaSpec(5, 4500, 750, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);
    SimSchedule schedule = new SimSchedule(0, List.of(quick, quick, quick, slow, quick),
        List.of(new SimSchedule.ServerDown(0, 200), new SimSchedule.Close(1, 987, false, 8),
            new FailingTakeover(29135, 1000, 50)), 30016, 50);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).isEmpty();
  }

  /**
   * Found by the generated schedules: a close at the moment the callback pool rejects a hand-over. The runner
   * reported STOPPED as CLOSED while its services were never stopped (the rejected hand-over was the stop; the
   * lifecycle counted it as in flight, and the failure while closing ended the runner), and another replica
   * started its own once the Lease expired: an overlap. A refused hand-over now stays queued on its lane and the
   * loop hands it over again ({@code LifecycleDriver.handOver}).
   */
  @Test
  void aCloseMetByARejectedStopHandOverStillStopsTheServices() {
    ReplicaSpec quick = new ReplicaSpec(1, 700, 116, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);
    SimSchedule schedule = new SimSchedule(0, List.of(quick, quick), List.of(
        new SimSchedule.Close(0, 330, false, 0), new LoopFault(0, 330, LoopFaultKind.CALLBACK_POOL_REJECTS, 1)),
        30_000, 1);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).isEmpty();
  }

  /**
   * Found by the generated schedules (a full run of 2026-12-04): two troubles at once for the leader, a stop that
   * hangs then a close from a callback, and a stop that throws then a partition, gave an OVERLAP at 1,333 ms. Not in
   * the runner: the simulation's model of a stop that both hung (182 ms, past the 150 ms stop timeout) and then threw
   * let its work run a second hung stop's time after it returned (up to 3 stop timeouts from the call, beyond the
   * 300 ms safety margin), where docs/reliability.md says "as long as a hung one would". The runner had done all it
   * can: it stopped waiting at the stop timeout, sent no release, and the other replica took the Lease only once it
   * expired. Now a stop that threw keeps its work until its return or a hung stop's time from its call, the later.
   */
  @Test
  void aHungStopClosedFromACallbackAndAThrowingStopPartitionedNeverOverlap() {
    ReplicaSpec quick = new ReplicaSpec(1, 700, 116, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);
    SimSchedule schedule = new SimSchedule(0, List.of(quick, quick, quick), List.of(
        new SimSchedule.LeaderTrouble(104, 926, SimSchedule.Trouble.STOP_HANGS, SimSchedule.Then.CLOSE_FROM_CALLBACK),
        new SimSchedule.LeaderTrouble(104, 926, SimSchedule.Trouble.STOP_THROWS_EXCEPTION,
            SimSchedule.Then.PARTITION)), 30_000, 1);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).isEmpty();
  }

  /** A schedule replays identically: every random choice comes from its seed. */
  @Test
  void aScheduleReplaysIdentically() {
    SimSchedule schedule = new SimSchedule(7, List.of(REPLICA, REPLICA, REPLICA),
        List.of(new Partition(0, 5_000, 20_000, Direction.BOTH)), 40_000, 20);

    Simulator.Result first = Simulator.run(schedule, SimVariant.REAL);
    Simulator.Result second = Simulator.run(schedule, SimVariant.REAL);

    assertThat(second.replicaSteps()).isEqualTo(first.replicaSteps());
    assertThat(second.invariants().failovers).isEqualTo(first.invariants().failovers);
    assertThat(second.invariants().writesAccepted).isEqualTo(first.invariants().writesAccepted);
  }

  /**
   * Found by a CI run's generated schedules: a foreign write made the leader's renewal conflict; its re-read and
   * second renewal were slow, just as the leader was closed. The server wrote that renewal, but the elector's timer
   * for it fired at the renew deadline, before its answer came, so the close, whose services had already stopped,
   * finished without releasing a Lease that it did not know it held, and the follower waited the Lease out. A finish
   * that comes after the renew deadline now reads the Lease back and releases the renewal it finds there.
   *
   * <p>Rebuilt when the runner's first read went out before its RBAC review (the random draws changed, and
   * replica-1 now leads): replica-1 takes the Lease with a write sent at 388.0 ms (renew deadline 1049.98 ms);
   * another client moves renewTime at 455 ms, so its renewal at 875.0 ms conflicts; the re-read is answered at
   * 985.3 ms and the second renewal goes out then, while its legs are slow (up to 150 ms, 966 to 986 ms): the server
   * writes it at 1037.8 ms. It is closed at 1000 ms, with the network whole again; its service's stop returns at
   * 1003.2 ms, so the finish is taken in during the renewal; the renewal's timer fires at the deadline, before its
   * answer (1056.3 ms); the close reads the Lease back (answered 1059.1 ms), finds that renewal and releases it.
   */
  @Test
  void aCloseThatMeetsALateRenewalStillReleasesTheLease() {
    SimSchedule schedule = lateRenewalMeetsClose(new SimSchedule.Slow(1, 966, 20, 150), 1000);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).as("%s", schedule).isEmpty();
    assertThat(Simulator.run(schedule, SimVariant.NO_RELEASE_AFTER_DEADLINE).invariants().violations())
        .as("%s", schedule).anyMatch(v -> v.startsWith("LOST_RELEASE: replica-1"));
  }

  /**
   * The same schedule with the second renewal's answer slow instead (up to 200 ms a leg, 960 to 990 ms: the server
   * writes it at 987.8 ms, the answer comes at 1146 ms) and the close at 995 ms, whose service's stop returns only
   * at 1067.6 ms: the renewal's timer gives up at the renew deadline (1049.98 ms) before the services have stopped,
   * so the term is lost first (RENEW_DEADLINE, a LOST Event) and the close finishes after the loss
   * ({@link LeaseProtocol#finishAfterLoss}), which reads the Lease back and releases the renewal that landed. No
   * literal schedule of the simulation takes a renewal's answer after the deadline but before its timer any more
   * (the timer is set at the deadline, and a paused process hands the answer back after the timer): that path is
   * covered by the step tables ({@code LeaseProtocolStepTest}).
   */
  @Test
  void aCloseAfterALossAtTheDeadlineReleasesTheRenewalThatLandedUnheard() {
    SimSchedule schedule = lateRenewalMeetsClose(new SimSchedule.Slow(1, 960, 30, 200), 995);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).as("%s", schedule).isEmpty();
    assertThat(Simulator.run(schedule, SimVariant.NO_RELEASE_AFTER_DEADLINE).invariants().violations())
        .as("%s", schedule).anyMatch(v -> v.startsWith("LOST_RELEASE: replica-1"));
  }

  /**
   * Review h-relloss, found by the generated schedules with the fix taken out (shrunk). Replica-0 ({@code CUSTOM}) is
   * paused from 319 ms to 3800 ms, past its renew deadline, and loses its term with the Lease still as it last wrote
   * it; its service stops cleanly and its loss handler closes the runner from inside (this seed's draw; no close is
   * scheduled). Before, the lifecycle commanded "end contention; finish elector: release": the elector ended its
   * protocol at the first, and the release changed nothing, so replica-1 waited out the Lease (LOST_RELEASE). Now the
   * close's finish answers the loss, and the Lease is released by a compare-and-set on that write.
   */
  @Test
  void aCloseDuringALossReleasesWhatTheLossLeftAsThisReplicaWroteIt() {
    SimSchedule schedule = new SimSchedule(-55, List.of(
        new ReplicaSpec(4, 3600, 600, 200, LossPolicy.Kind.CUSTOM, 1, 0, 0, false),
        new ReplicaSpec(4, 3600, 600, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false)),
        List.of(new SimSchedule.Slow(1, 0, 255, 102), new Pause(0, 319, 3481)), 30_000, 50);

    SimInvariants invariants = Simulator.run(schedule, SimVariant.REAL).invariants();
    assertThat(invariants.violations()).as("%s", schedule).isEmpty();
    assertThat(invariants.releasesAfterLossChecked).as("closes during a loss checked for their release").isEqualTo(1);
  }

  private static SimSchedule lateRenewalMeetsClose(SimSchedule.Slow leaderSlow, long closeAt) {
    ReplicaSpec spec = new ReplicaSpec(1, 662, 487, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);
    return new SimSchedule(0, List.of(spec, spec), List.of(new SimSchedule.Slow(1, 0, 200, 414),
        new SimSchedule.Foreign(455, SimSchedule.ForeignKind.BUMP_RENEW_TIME, 0), leaderSlow,
        new SimSchedule.Close(1, closeAt, false, 0)), 30_000, 50);
  }

  /**
   * Found by the generated schedules (with the lifecycle's first read sent before the RBAC review), a gap of the
   * harness, not of the runner. Replica-1 leads from 101.9 ms (its take, decided at 99.0 ms and held for the
   * preflight's verdict, sets its renew deadline at 799.03 ms); at 400 ms another client moves the Lease's renewTime
   * (holder and term kept, resourceVersion 2); replica-1 is closed at 548.0 ms as it sends its next renewal, whose
   * answer is lost. The server refused that renewal (409: it was conditional on resourceVersion 1), so the leader
   * never learnt of the foreign write. Its service stopped by 589.0 ms; the release waited for the renewal's timeout
   * (787.0 ms: one request in flight), went out on resourceVersion 1, conflicted, and its re-read was answered at
   * 799.10 ms, 0.07 ms past the renew deadline, with the foreign write. Past the deadline the runner releases only
   * what the Lease shows as this replica wrote it (its last known write or a renewal in doubt; docs/reliability.md
   * rule 6, {@code LeaseProtocolStepEdgesTest.aReleaseRereadAnsweredAtTheDeadlineLeavesABumpedTermToExpire}), so it
   * left the Lease to expire, as documented. The checker called the close undisturbed because the foreign write came
   * before the close, though the Lease still held it, unseen by the leader. A close is now excused exactly then: it
   * ended past its renew deadline (the term's own, on the replica's clock) with the Lease as another client wrote it
   * before the close and this process never saw. (Found with the foreign write at 337 ms; with the draws of the
   * first read before the review, that close's re-read comes 1.5 ms before the deadline, and it releases.)
   */
  @Test
  void aCloseRereadPastTheDeadlineLeavesAForeignWriteItNeverSawToExpire() {
    SimSchedule schedule = lostRenewalAnswerAtClose(
        new SimSchedule.Foreign(400, SimSchedule.ForeignKind.BUMP_RENEW_TIME, 0));

    Simulator.Result real = Simulator.run(schedule, SimVariant.REAL);

    assertThat(real.invariants().violations()).as("%s", schedule).isEmpty();
    assertThat(real.invariants().closesLeftToAForeignWrite).as("the close excused").isEqualTo(1);
  }

  /**
   * Without that write the same close must release: the renewal whose answer was lost landed (550.3 ms), the
   * release on the older resourceVersion conflicts with it, and the re-read, answered 0.07 ms past the deadline,
   * finds it and releases it. The checker still asks for that release, and the broken variant that drops it fails.
   */
  @Test
  void theSameCloseWithoutTheForeignWriteReleasesTheRenewalWhoseAnswerWasLost() {
    SimSchedule schedule = lostRenewalAnswerAtClose();

    Simulator.Result real = Simulator.run(schedule, SimVariant.REAL);

    assertThat(real.invariants().violations()).as("%s", schedule).isEmpty();
    assertThat(real.invariants().closesLeftToAForeignWrite).isZero();
    assertThat(Simulator.run(schedule, SimVariant.NO_RELEASE_AFTER_DEADLINE).invariants().violations())
        .as("%s", schedule).anyMatch(v -> v.startsWith("LOST_RELEASE: replica-1"));
  }

  private static SimSchedule lostRenewalAnswerAtClose(SimSchedule.Fault... more) {
    ReplicaSpec spec = new ReplicaSpec(1, 700, 449, 239, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);
    List<SimSchedule.Fault> faults = new ArrayList<>(List.of(new SimSchedule.CloseMeetsLostRenewalAnswer(102)));
    faults.addAll(List.of(more));
    return new SimSchedule(0, List.of(spec, spec), faults, 30_000, 5);
  }

  /**
   * Found by a CI run's generated schedules, a gap of the harness: a leader closed (a hand-over close) at the
   * instant a delayed fault cut it off (the partition of {@link SimSchedule.SlowFollowersThenLeaderCrash}, gap 0).
   * Its release could not reach the server, yet the close was counted as undisturbed: faults mark the replicas then
   * closing as disturbed when they are applied, and this one applied its partition later. Delayed parts of a fault
   * now mark them too.
   */
  @Test
  void aLeaderCutOffAsItClosesIsNotExpectedToRelease() {
    ReplicaSpec quick = new ReplicaSpec(1, 700, 116, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);
    SimSchedule schedule = new SimSchedule(0, List.of(quick, quick), List.of(
        new SimSchedule.SlowFollowersThenLeaderCrash(99, 100, 0), new HandOverClose(99, 0, 0)), 30_000, 1);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).as("%s", schedule).isEmpty();
  }

  /**
   * Found by a CI run's generated schedules, a gap of the harness: the only contending replica (the other runs
   * unelected), paused until just before the quiet tail, found its term lost, exited under EXIT and restarted after
   * its restart delay, in the tail; nobody could lead meanwhile, and liveness was judged from the tail's start.
   * Liveness is now judged from the tail or from a contender's restart in it, whichever is later.
   */
  @Test
  void aLoneContenderThatExitsAtTheEndOfTheFaultsIsJudgedFromItsRestart() {
    ReplicaSpec exiting = new ReplicaSpec(1, 700, 116, 200, LossPolicy.Kind.EXIT, 1, 0, 0, false);
    ReplicaSpec unelected = new ReplicaSpec(1, 700, 116, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false)
        .asUnelected();
    SimSchedule schedule = new SimSchedule(0, List.of(exiting, unelected),
        List.of(new SimSchedule.Pause(0, 9230, 20708)), 30_000, 50);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).as("%s", schedule).isEmpty();
  }

  /**
   * Found by the generated schedules once a loop fault could strike the leader twice (the Error of an I/O pool that
   * cannot start a thread, for its renewal and then for the Event that ends its term): the second failure, on the
   * failure's own path, ended the runner through its emergency stop, which reported STOPPED without telling the
   * lifecycle. The close that came next (here from inside the services' stop, as a STOPPED listener or a shutdown
   * hook would) was still stepped through the lifecycle, which saw a leader and stopped the services a second time,
   * after STOPPED, with a deadline timer left on the loop, so awaitStopped() did not return. The driver now
   * gives the lifecycle no input after an emergency stop.
   */
  @Test
  void aCloseAfterAnEmergencyStopDoesNothingMore() {
    SimSchedule schedule = new SimSchedule(0, List.of(FAST, FAST, FAST), List.of(
        new LeaderTrouble(5000, 400, Trouble.STOP_THROWS_EXCEPTION, Then.CLOSE_FROM_CALLBACK),
        new LoopFault(0, 5200, LoopFaultKind.TRANSPORT_THROWS_ERROR, 2)), 20_000, 20);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).as("%s", schedule).isEmpty();
  }

  /**
   * Found by the simulation run of h-attack2 (seed -5916693166509352766, shrunk; failing on main at 48b36b9 too):
   * the only contender (EXIT; the other replica runs unelected) leads, is cut off by SlowFollowersThenLeaderCrash,
   * loses and exits; its next process starts while still cut off, finds the Lease under its own identity (a term it
   * did not write), waits it out and leads. It led 2 ms past the old bound (lease duration + 2 × retry period + 4
   * legs from the quiet tail), which did not state the guarantee: a contender that has not seen the Lease yet takes
   * it a lease duration after its first read is answered, and that read can come only after a call lost to the
   * faults just before the tail timed out, plus a retry period and its jitter (see
   * {@link SimSchedule#livenessBoundMillis()}). At 48b36b9 the lost call was the access reviews (simulated as
   * 2 × requestTimeout), which the first read then waited for; on main the read goes beside them, so the same
   * literal schedule passed there. With the tail at 27.7 s instead of 30 s, the process starts at 27.678 s and its
   * reviews, first read and watch are lost; the read times out at 28.558 s, the next one is sent after its jittered
   * retry period and answered at 29.041 s, the process waits the 3 s lease duration and leads at 32.042 s: 438 ms
   * past the old bound (31.604 s), within the derived one (27.7 s + 880 + 540 + 3000 + 6 ms = 32.126 s). The runner
   * lost no time: it waited exactly the lease duration from its first answer, as docs/fabric8.md says.
   */
  @Test
  void aLoneContenderCutOffJustBeforeTheTailLeadsWithinTheBoundAfterItsRestart() {
    ReplicaSpec exiting = new ReplicaSpec(3, 2700, 450, 880, LossPolicy.Kind.EXIT, 1, 0, 0, false);
    ReplicaSpec unelected = new ReplicaSpec(3, 2700, 450, 880, LossPolicy.Kind.RECONTEND, 1, 0, 0, false)
        .asUnelected();
    SimSchedule schedule = new SimSchedule(0, List.of(exiting, unelected),
        List.of(new Partition(0, 0, 18064, Direction.BOTH),
            new SimSchedule.SlowFollowersThenLeaderCrash(22534, 100, 610)), 27_700, 1);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).as("%s", schedule).isEmpty();
  }

  /**
   * Found by the simulation run of h-live (a shrunk generated schedule): a replica paused while its access
   * reviews (denied) and its first read were answered. On the resume, the elector's timer that fell due during the
   * pause ran before the loop task that hands the denial to the lifecycle, and read the Lease once more; the harness
   * counted the verdict as given when the reviews answered, before the runner could know it. A read then is one
   * that the first read's overlap with the reviews allows (no write goes before the verdict): invariant 10 now
   * counts the verdict from when the runner's loop takes it in, and no call may follow that.
   */
  @Test
  void aReadDueBeforeTheLoopTakesInTheDenialIsAllowed() {
    ReplicaSpec fast = new ReplicaSpec(1, 700, 116, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);
    SimSchedule schedule = new SimSchedule(-76, List.of(fast, fast, fast), List.of(new Pause(2, 396, 200)), 30_000,
        1);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).as("%s", schedule).isEmpty();
  }

  /**
   * Found by the generated schedules (seed 5018798648021485263 at 7bf13dc; the same schedule fails at a39dd08): two
   * leaders released one after the other within one retry period (replica-1 closed at 464 ms and replica-2, which
   * took over, 23 ms later), and replica-3, which started at 390 ms, sent eleven Lease calls within 428 ms. Between
   * its take at 549.6 ms (answered 409: another client had moved the Lease's renewTime at 548 ms) and the re-read
   * that the conflict asks for (sent at 556.0 ms, answered with replica-2's term at 560.9 ms), the watch's event of
   * that foreign write came in; the protocol takes events in only between calls, so it met the event after the
   * re-read's answer and, seeing another version than the answer's, read once more (560.9 ms). But the event had
   * arrived before the re-read was sent, so the server had written it before it served the re-read: the re-read's
   * answer was at least as new, and the extra read told nothing. An event that arrived before the last read was
   * sent is now ignored ({@code LeaseProtocolStepEdgesTest.Watching}); only one that arrived while the read was in
   * flight asks for another. (The draws differ after the change, so this schedule no longer reaches that instant;
   * it stays as the generated schedule that found it.) The same window, drawn anew, showed the bound itself too
   * strict: eleven calls each of which answered a change of the Lease by another client (two releases, a take, the
   * foreign write) or a failure; the load invariant now allows {@link SimInvariants#CALLS_PER_CHANGE} calls per such
   * change.
   */
  @Test
  void aWatchEventOlderThanAConflictsRereadDoesNotAskForAnotherRead() {
    ReplicaSpec spec = new ReplicaSpec(2, 1700, 428, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);
    ReplicaSpec two = new ReplicaSpec(2, 1700, 428, 200, LossPolicy.Kind.RECONTEND, 2, 0, 0, false);
    SimSchedule schedule = new SimSchedule(0, List.of(spec, two, spec, spec),
        List.of(new Partition(0, 341, 200, Direction.BOTH), new HandOverClose(464, 23, 2),
            new SimSchedule.Foreign(548, SimSchedule.ForeignKind.BUMP_RENEW_TIME, 0),
            new SimSchedule.ServerDown(587, 200)), 30_000, 5);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).as("%s", schedule).isEmpty();
  }

  /**
   * The load invariant can fail: a follower that tries again at once after a failed call (the broken variant
   * {@code NO_WAIT_AFTER_FAILURE}) sends a read every round trip to a server that answers 503 for its first second;
   * the real protocol waits a jittered retry period between them.
   */
  @Test
  void aFollowerThatRetriesAtOnceAfterAFailureBreaksTheLoadBound() {
    ReplicaSpec spec = new ReplicaSpec(2, 1700, 428, 200, LossPolicy.Kind.RECONTEND, 1, 0, 0, false);
    SimSchedule schedule = new SimSchedule(0, List.of(spec, spec), List.of(new SimSchedule.ServerDown(0, 1000)),
        30_000, 5);

    assertThat(Simulator.run(schedule, SimVariant.REAL).invariants().violations()).as("%s", schedule).isEmpty();
    assertThat(Simulator.run(schedule, SimVariant.NO_WAIT_AFTER_FAILURE).invariants().violations())
        .as("%s", schedule).anyMatch(v -> v.startsWith("LOAD: "));
  }
}
