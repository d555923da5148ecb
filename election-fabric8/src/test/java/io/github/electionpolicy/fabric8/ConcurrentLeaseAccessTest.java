package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.LeaseAccess.Verdict;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The preflight's review with its questions sent at once on an executor: the same verdicts, read in the same
 * order, as one after another; about one round trip; and no deadlock on an executor that never runs them.
 */
class ConcurrentLeaseAccessTest {

  private final ExecutorService pool = Executors.newFixedThreadPool(4);

  @AfterEach
  void stopPool() {
    pool.shutdownNow();
  }

  private static String verb(io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview review) {
    return review.getSpec().getResourceAttributes().getVerb();
  }

  @Test
  void allFourQuestionsAreInFlightAtOnce() {
    CountDownLatch allAsked = new CountDownLatch(4);
    LeaseAccess access = LeaseAccess.review("shop", "orders", review -> {
      allAsked.countDown();
      // Each answer waits until every question has been asked: one after another this would never finish.
      return Optional.of(allAsked.await(5, TimeUnit.SECONDS));
    }, pool);

    assertThat(access.verdict()).isEqualTo(Verdict.GRANTED);
    assertThat(allAsked.getCount()).isZero();
  }

  @Test
  void sameVerdictsAsOneAfterAnother() {
    List<Map<String, Optional<Boolean>>> cases = List.of(
        Map.of(),
        Map.of("update", Optional.of(false)),
        Map.of("create", Optional.of(false), "update", Optional.of(false), "watch", Optional.of(false)),
        Map.of("watch", Optional.of(false)),
        Map.of("watch", Optional.empty()),
        Map.of("create", Optional.empty(), "update", Optional.of(false)),
        Map.of("get", Optional.of(false), "create", Optional.empty()));
    for (Map<String, Optional<Boolean>> answers : cases) {
      LeaseAccess.Reviewer reviewer = review -> answers.getOrDefault(verb(review), Optional.of(true));
      assertThat(LeaseAccess.review("shop", "orders", reviewer, pool)).as(answers.toString())
          .isEqualTo(LeaseAccess.review("shop", "orders", reviewer));
    }
  }

  @Test
  void theFirstRequiredVerbWithoutAnAnswerNamesTheReasonEvenWhenALaterOneFailsFirst() {
    CountDownLatch createFailed = new CountDownLatch(1);
    LeaseAccess access = LeaseAccess.review("shop", "orders", review -> {
      if (verb(review).equals("get")) {
        // Fails only once create has failed (the pool runs the reviews side by side): get fails last.
        assertThat(createFailed.await(5, TimeUnit.SECONDS)).as("create's review ran").isTrue();
        throw new IllegalStateException("get is slow and fails");
      }
      if (verb(review).equals("create")) {
        createFailed.countDown();
        throw new IllegalStateException("create fails at once");
      }
      return Optional.of(true);
    }, pool);

    assertThat(access.verdict()).isEqualTo(Verdict.UNKNOWN);
    assertThat(access.unknownReason()).get().asString()
        .isEqualTo("the SelfSubjectAccessReview for \"get\" failed: get is slow and fails");
  }

  @Test
  void anExecutorThatNeverRunsTheQuestionsOnlyMakesThemRunOnTheCallingThread() {
    Set<String> threads = ConcurrentHashMap.newKeySet();
    LeaseAccess access = LeaseAccess.review("shop", "orders", review -> {
      threads.add(Thread.currentThread().getName());
      return Optional.of(!verb(review).equals("watch"));
    }, task -> { /* saturated: accepted, never run */ });

    assertThat(access.verdict()).isEqualTo(Verdict.GRANTED);
    assertThat(access.watchDenied()).isTrue();
    assertThat(threads).containsExactly(Thread.currentThread().getName());
  }

  @Test
  void anInterruptWhileWaitingIsUnknownAndKeepsTheThreadInterrupted() throws Exception {
    CountDownLatch never = new CountDownLatch(1);
    CountDownLatch reviewing = new CountDownLatch(1);
    LeaseAccess[] result = new LeaseAccess[1];
    boolean[] interrupted = new boolean[1];
    Thread caller = new Thread(() -> {
      result[0] = LeaseAccess.review("shop", "orders", review -> {
        reviewing.countDown();
        never.await();
        return Optional.of(true);
      }, pool);
      interrupted[0] = Thread.currentThread().isInterrupted();
    });
    caller.start();
    // The caller has handed the reviews to the pool and waits for them (or is about to: an interrupt that comes
    // first is seen by the wait all the same).
    assertThat(reviewing.await(5, TimeUnit.SECONDS)).isTrue();
    caller.interrupt();
    caller.join(5000);

    assertThat(caller.isAlive()).isFalse();
    assertThat(result[0].verdict()).isEqualTo(Verdict.UNKNOWN);
    assertThat(result[0].unknownReason()).get().asString().startsWith("the SelfSubjectAccessReview for \"get\"");
    assertThat(interrupted[0]).isTrue();
  }
}
