package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.LeaseStep.FactKind;
import io.github.electionpolicy.fabric8.LeaseStep.LossCause;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which leadership Events a step of the protocol makes due, as a table: seed the term, hand {@link
 * LeadershipEvents#due} a step, read the Events. No transport, no clock.
 */
class LeadershipEventsStepTest {

  private static final Instant T0 = Instant.parse("2026-12-01T10:00:00.123456Z");
  private static final LeaseSettings SETTINGS = LeaseSettings.builder().leaseName("orders-controller").build();

  private final List<LeadershipEvent> sent = new ArrayList<>();
  private final LeadershipEvents events = new LeadershipEvents("orders-controller", "pod-a", SETTINGS,
      new NoTransport());

  private static LeaseStep step(LeaseStep.Action action, LeaseStep.Signal... signals) {
    return new LeaseStep(action, List.of(signals));
  }

  private static LeaseStep elected(int transitions, String previous) {
    LeaseRecord record = new LeaseRecord("pod-a", 15, T0, T0, transitions, "7");
    return step(new LeaseStep.Await(0), new LeaseStep.Elected(record, 0, Optional.ofNullable(previous)));
  }

  private List<String> messages(LeaseStep step) {
    return events.due(step, T0).stream().map(LeadershipEvent::message).toList();
  }

  @Test
  void aNewTermIsOneNormalEventNamingTheFencingTokenAndThePreviousHolder() {
    List<LeadershipEvent> due = events.due(elected(4, "pod-b"), T0);

    assertThat(due).singleElement().satisfies(event -> {
      assertThat(event.kind()).isEqualTo(LeadershipEvent.Kind.BECAME_LEADER);
      assertThat(event.kind().type()).isEqualTo("Normal");
      assertThat(event.message()).isEqualTo("pod-a became leader (fencing token 4; previous holder pod-b)");
      assertThat(event.fencingToken()).isEqualTo(4);
      assertThat(event.identity()).isEqualTo("pod-a");
      assertThat(event.time()).isEqualTo(T0);
      assertThat(event.name()).isEqualTo("orders-controller."
          + Long.toHexString(T0.getEpochSecond() * 1_000_000_000L + T0.getNano()));
    });
  }

  @Test
  void aTermTakenFromAFreeLeaseNamesNoPreviousHolder() {
    assertThat(messages(elected(0, null))).containsExactly("pod-a became leader (fencing token 0)");
    assertThat(messages(elected(1, "pod-a"))).as("its own earlier term is no previous holder")
        .containsExactly("pod-a became leader (fencing token 1)");
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
      "RENEW_DEADLINE | not renewed within the renew deadline of 10s",
      "LATE_RENEWAL   | renewed only after the renew deadline of 10s had passed",
      "TERM_LAPSED    | renewed only after the renew deadline of 10s had passed",
      "DELETED        | the Lease was deleted",
      "TAKEN          | the Lease was taken by pod-b",
      "SAME_IDENTITY  | another process with the same identity took the Lease",
      "START_FAILED   | a reconciler could not start, so the term was given up"})
  void aLossIsAWarningWithItsCauseThenTheEndOfTheTerm(LossCause cause, String text) {
    events.due(elected(3, null), T0);

    List<LeadershipEvent> due = events.due(step(new LeaseStep.HandleLoss(),
        new LeaseStep.Lost(cause, cause == LossCause.TAKEN ? Optional.of("pod-b") : Optional.empty())), T0);

    assertThat(due).extracting(LeadershipEvent::kind)
        .containsExactly(LeadershipEvent.Kind.LOST, LeadershipEvent.Kind.STOPPED_LEADING);
    assertThat(due.get(0).kind().type()).isEqualTo("Warning");
    assertThat(due.get(0).message()).isEqualTo("pod-a lost leadership (fencing token 3): " + text);
    assertThat(due.get(1).message()).isEqualTo("pod-a stopped leading (fencing token 3)");
    assertThat(due.get(1).name()).as("two Events of one instant get two names")
        .isGreaterThan(due.get(0).name());
  }

  @Test
  void aReleaseEndsTheTermWithoutALoss() {
    events.due(elected(2, null), T0);

    assertThat(messages(step(new LeaseStep.Finished(), new LeaseStep.Fact(FactKind.RELEASED, ""))))
        .containsExactly("pod-a stopped leading (fencing token 2): released the Lease");
  }

  @Test
  void aCloseThatLeavesTheLeaseToExpireSaysSo() {
    events.due(elected(2, null), T0);

    assertThat(messages(step(new LeaseStep.Finished(), new LeaseStep.Fact(FactKind.ABANDONED, ""))))
        .containsExactly("pod-a stopped leading (fencing token 2): left the Lease to expire");
  }

  @Test
  void aFailedReleaseSaysTheLeaseExpires() {
    events.due(elected(2, null), T0);

    assertThat(messages(step(new LeaseStep.Finished(), new LeaseStep.Fact(FactKind.RELEASE_FAILED, "409"))))
        .containsExactly("pod-a stopped leading (fencing token 2): the release failed, so the Lease expires");
  }

  @Test
  void aFinishPastTheDeadlineLeavesTheLeaseToExpire() {
    events.due(elected(2, null), T0);

    assertThat(messages(step(new LeaseStep.Finished())))
        .containsExactly("pod-a stopped leading (fencing token 2): left the Lease to expire");
  }

  @Test
  void aReleaseAfterAReconcilerFailedToStartIsALossFirst() {
    events.due(elected(5, null), T0);

    // The protocol releases, then signals the loss, in one step.
    assertThat(messages(step(new LeaseStep.HandleLoss(), new LeaseStep.Fact(FactKind.RELEASED, ""),
        new LeaseStep.Lost(LossCause.START_FAILED, Optional.empty()))))
        .containsExactly("pod-a lost leadership (fencing token 5): a reconciler could not start, so the term was "
            + "given up", "pod-a stopped leading (fencing token 5): released the Lease");
  }

  /** A simulation finding: a failure inside the loop ended a term without a step, and so without its Event. */
  @Test
  void aFailureOfTheElectionLogicEndsTheTermItHeldOnce() {
    List<LeadershipEvent> sent = new ArrayList<>();
    LeadershipEvents failing = new LeadershipEvents("orders-controller", "pod-a", SETTINGS, new NoTransport() {
      @Override
      public void recordEvent(LeadershipEvent event, Runnable done) {
        sent.add(event);
        done.run();
      }
    });
    failing.failed(T0);
    assertThat(sent).as("a follower that fails led nothing").isEmpty();

    failing.step(elected(6, null), T0);
    failing.failed(T0);
    failing.failed(T0);
    failing.step(step(new LeaseStep.Finished()), T0);

    assertThat(sent).extracting(LeadershipEvent::message).containsExactly("pod-a became leader (fencing token 6)",
        "pod-a stopped leading (fencing token 6): the election failed");
  }

  @Test
  void aTermEndsOnceAndStepsOfAFollowerRecordNothing() {
    assertThat(messages(step(new LeaseStep.Await(0), new LeaseStep.Following(Optional.of("pod-b"))))).isEmpty();
    assertThat(messages(step(new LeaseStep.Finished()))).as("a follower that stops led nothing").isEmpty();

    events.due(elected(1, null), T0);
    assertThat(messages(step(new LeaseStep.Await(0), new LeaseStep.Renewed(0, 0)))).isEmpty();
    assertThat(messages(step(new LeaseStep.HandleLoss(), new LeaseStep.Lost(LossCause.DELETED,
        Optional.empty())))).hasSize(2);
    assertThat(messages(step(new LeaseStep.Finished()))).as("the term already ended").isEmpty();
  }

  @Test
  void namesStayValidForTheLongestLeaseName() {
    String longest = "a".repeat(240) + ".b-c.d" + "e".repeat(7);
    LeadershipEvents longName = new LeadershipEvents(longest, "pod-a", SETTINGS, new NoTransport());

    LeadershipEvent event = longName.due(elected(0, null), T0).get(0);

    assertThat(event.name()).hasSizeLessThanOrEqualTo(253)
        .matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
        .endsWith("." + Long.toHexString(T0.getEpochSecond() * 1_000_000_000L + T0.getNano()));
  }

  @Test
  void eventsGoOneAtATimeInTheOrderTheyHappened() {
    List<Runnable> answers = new ArrayList<>();
    LeadershipEvents queued = new LeadershipEvents("orders-controller", "pod-a", SETTINGS, new NoTransport() {
      @Override
      public void recordEvent(LeadershipEvent event, Runnable done) {
        sent.add(event);
        answers.add(done);
      }
    });

    queued.step(elected(1, null), T0);
    queued.step(step(new LeaseStep.HandleLoss(), new LeaseStep.Lost(LossCause.DELETED, Optional.empty())), T0);
    assertThat(sent).as("the first is in flight, the others wait").hasSize(1);
    answers.get(0).run();
    assertThat(sent).hasSize(2);
    answers.get(1).run();
    answers.get(2).run();

    assertThat(sent).extracting(LeadershipEvent::kind).containsExactly(LeadershipEvent.Kind.BECAME_LEADER,
        LeadershipEvent.Kind.LOST, LeadershipEvent.Kind.STOPPED_LEADING);
  }

  @Test
  void eventsBeyondTheQueueAreDroppedNotBuffered() {
    List<Runnable> answers = new ArrayList<>();
    LeadershipEvents hung = new LeadershipEvents("orders-controller", "pod-a", SETTINGS, new NoTransport() {
      @Override
      public void recordEvent(LeadershipEvent event, Runnable done) {
        sent.add(event);
        answers.add(done);
      }
    });

    for (int term = 0; term < LeadershipEvents.MAX_QUEUED + 10; term++) {
      hung.step(elected(term, null), T0);
    }
    assertThat(sent).hasSize(1);
    for (int i = 0; i < answers.size(); i++) {
      answers.get(i).run();
    }

    assertThat(sent).hasSize(1 + LeadershipEvents.MAX_QUEUED);
  }

  /**
   * Fabric8LeaseTransport.recordEvent passes on what the shared pool throws besides a rejection: BoundedCalls
   * rethrows the {@link Error} of a pool that cannot start a thread ("unable to create native thread"). Thrown out
   * of {@code step()}, which the elector calls on the loop, it failed the election (ELECTION_FAILED, an exit
   * under {@code EXIT}) for an Event that is best effort; and it left the Events marked as sending for good, so no
   * later Event was written. Thrown from the Event after it (handed over on the worker that answered), it ended
   * the chain the same way. A hand-over that fails is an Event not recorded: the next one goes.
   */
  @Test
  void anEventThePoolCannotTakeIsDroppedWithoutFailingTheStepOrStoppingTheEventsAfterIt() {
    java.util.Set<Integer> refused = java.util.Set.of(1, 3);
    int[] calls = {0};
    LeadershipEvents refusing = new LeadershipEvents("orders-controller", "pod-a", SETTINGS, new NoTransport() {
      @Override
      public void recordEvent(LeadershipEvent event, Runnable done) {
        if (refused.contains(++calls[0])) {
          throw new OutOfMemoryError("simulated: unable to create native thread");
        }
        sent.add(event);
        done.run();
      }
    });

    // Caught here so that the simulated OutOfMemoryError fails the test instead of ending the test JVM.
    org.assertj.core.api.Assertions.assertThatCode(() -> {
      refusing.step(elected(1, null), T0);
      refusing.step(step(new LeaseStep.HandleLoss(), new LeaseStep.Lost(LossCause.DELETED, Optional.empty())), T0);
      refusing.step(elected(2, null), T0);
    }).doesNotThrowAnyException();

    assertThat(sent).extracting(LeadershipEvent::message).containsExactly(
        "pod-a lost leadership (fencing token 1): the Lease was deleted", "pod-a became leader (fencing token 2)");
  }

  /** docs/events.md's table of loss causes is what the messages say, at the default renew deadline. */
  @Test
  void theLossCausesOfTheDocsAreTheMessagesEnds() throws java.io.IOException {
    String doc = java.nio.file.Files.readString(java.nio.file.Path.of(System.getProperty("basedir", "."))
        .resolve("../docs/events.md").normalize());
    String table = doc.substring(doc.indexOf("<!-- loss-causes:start -->"), doc.indexOf("<!-- loss-causes:end -->"));
    List<String> ends = table.lines().filter(line -> line.startsWith("| ") && line.endsWith("` |"))
        .map(line -> line.substring(line.lastIndexOf("| `") + 3, line.length() - 3)).toList();
    List<LossCause> causes = List.of(LossCause.RENEW_DEADLINE, LossCause.LATE_RENEWAL, LossCause.DELETED,
        LossCause.TAKEN, LossCause.SAME_IDENTITY, LossCause.START_FAILED);

    assertThat(ends).hasSize(causes.size());
    for (int i = 0; i < causes.size(); i++) {
      events.due(elected(1, null), T0);
      LeadershipEvent lost = events.due(step(new LeaseStep.HandleLoss(), new LeaseStep.Lost(causes.get(i),
          Optional.of("<holder>"))), T0).get(0);
      assertThat(lost.message()).as("%s", causes.get(i)).endsWith(": " + ends.get(i));
    }
  }

  /** A transport that takes no call; the tests that send override {@link #recordEvent}. */
  private static class NoTransport implements LeaseTransport {
    @Override
    public Call read(Answered done) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Call create(LeaseRecord record, Answered done) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Call delete(LeaseRecord released, Answered done) {
      throw new UnsupportedOperationException("an election's Lease is never deleted");
    }

    @Override
    public Call update(LeaseRecord record, Answered done) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Call watch(WatchEvents events) {
      throw new UnsupportedOperationException();
    }

    @Override
    public Call preflight(java.util.function.Consumer<Optional<LeaseAccessDeniedException>> done,
        java.util.function.Consumer<Throwable> failed) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void recordEvent(LeadershipEvent event, Runnable done) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {}
  }
}
