package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Adversarial review of the {@link ElectionListener#renewed(Duration)} hook added for election-micrometer.
 * Each test names the behaviour that should hold.
 */
class ListenerHookAttackTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  /**
   * Attack: the protocol accepts a renewal answered before its deadline on the protocol's clock, but the
   * term is extended a moment later, on the Lease thread (LeaseElector.take); if the term's own clock says it
   * lapsed meanwhile (a descheduled thread, a GC pause on a loaded machine), {@code extendUntil} refuses and the
   * term is lost (TERM_LAPSED). LeaseElector published {@code renewed} for that renewal anyway, right before
   * the loss: the hook, and the renew-duration timer of election-micrometer, counted a renewal that renewed
   * nothing, which its Javadoc rules out ("not called ... for a renewal answered after the renew deadline
   * (that is a loss)").
   *
   * <p>The test moves the runner's monotonic clock past the term's end inside the third {@code extendUntil},
   * exactly the window above; two renewals extended the term, so two must be heard before the loss.
   */
  @Test
  void aRenewalThatCouldNotExtendTheLapsedTermIsNotReportedAsARenewal() throws Exception {
    AtomicLong offset = new AtomicLong();
    AtomicInteger extensions = new AtomicInteger();
    Ticker ticker = () -> {
      boolean extending = StackWalker.getInstance()
          .walk(frames -> frames.limit(4).anyMatch(frame -> frame.getMethodName().equals("extendUntil")));
      if (extending && extensions.incrementAndGet() == 3) {
        offset.addAndGet(Duration.ofSeconds(30).toNanos());
      }
      return System.nanoTime() + offset.get();
    };
    List<String> heard = new CopyOnWriteArrayList<>();
    ElectionListener listener = new ElectionListener() {
      @Override
      public void stateChanged(ElectionState previous, ElectionState current) {
        heard.add(current.kind().name());
      }

      @Override
      public void renewed(Duration roundTrip) {
        heard.add("renewed");
      }
    };
    ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(log.service("a"))
        .listener(listener)
        .ticker(ticker)
        .start();
    try {
      assertThat(Replica.awaitTrue(() -> heard.indexOf("FOLLOWING") > heard.indexOf("LEADING")
          && heard.contains("LEADING"), Duration.ofSeconds(20))).as("the term lapsed: " + heard).isTrue();

      List<String> seen = List.copyOf(heard);
      List<String> firstTerm = seen.subList(seen.indexOf("LEADING") + 1, seen.indexOf("FOLLOWING"));
      assertThat(extensions.get()).isGreaterThanOrEqualTo(3);
      assertThat(firstTerm).as("renewals heard while the first term lasted").containsExactly("renewed", "renewed");
    } finally {
      runner.close();
    }
  }
}
