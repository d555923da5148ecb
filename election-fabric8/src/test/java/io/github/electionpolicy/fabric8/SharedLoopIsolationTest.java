package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Runners of one JVM share one loop and two small pools: one runner's trouble (its API server cut off, a slow log
 * appender) does not end another runner's term. (From the adversarial review of the runner's rewrite onto
 * RunnerLifecycle / LifecycleDriver, commit 0201dfc.)
 */
class SharedLoopIsolationTest {

  @RegisterExtension
  final MockApi api = new MockApi().answeringAccessReviews();
  private final ServiceLog log = new ServiceLog();

  /**
   * FINDING 4. Every runner of the JVM shares one I/O pool of 8 threads, FIFO, with no per-runner bound. Runners
   * whose API server hangs (a partition: here other Leases, through a link of their own) each hold threads for
   * whole request timeouts (a read, a watch that opens, a preflight); a handful of them fill the pool, and a
   * healthy leader's renewals, on a healthy connection, wait in the queue past their own request timeout: it
   * loses a Lease it could renew at any moment. One runner's outage ends another's leadership.
   */
  @Test
  void runnersCutOffFromTheirServerDoNotEndAHealthyLeadersTerm() throws Exception {
    List<ElectionState> healthyStates = new CopyOnWriteArrayList<>();
    ElectionRunner healthy = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("healthy").build())
        .service(log.service("healthy"))
        .listener(new ElectionListener() {
          @Override
          public void stateChanged(ElectionState previous, ElectionState current) {
            healthyStates.add(current);
          }
        })
        .start();
    List<ElectionRunner> cutOff = new ArrayList<>();
    ReplicaLink link = api.proxy();
    try {
      assertThat(Replica.awaitTrue(() -> healthy.state().kind() == ElectionState.Kind.LEADING,
          Duration.ofSeconds(5))).isTrue();
      LeadershipTerm term = healthy.currentTerm().orElseThrow();
      assertThat(api.awaitWrites("healthy", 10)).as("control: it renews on its own").isTrue();
      assertThat(healthy.currentTerm()).as("control: it keeps its term on its own").contains(term);
      healthyStates.clear();
      link.partition();
      for (int i = 0; i < 8; i++) {
        cutOff.add(ElectionRunner.builder()
            .client(api.client(link.url()))
            .decision(MockApi.CONTEND)
            .settings(MockApi.fastSettings("cut-off-" + i).leaseName("other-" + i).build())
            .service(log.service("cut-off-" + i))
            .start());
      }

      // 25 retry periods of renewals (5 s at these timings) while the cut-off runners hold I/O threads for
      // whole request timeouts; a healthy leader starved of its renewals loses its term well before.
      assertThat(api.awaitWrites("healthy", 25)).as("the healthy leader renews; states %s", healthyStates)
          .isTrue();

      assertThat(healthyStates).as("the healthy leader's state changes").isEmpty();
      assertThat(term.isValid()).isTrue();
    } finally {
      link.heal();
      for (ElectionRunner runner : cutOff) {
        runner.close();
      }
      healthy.close();
    }
  }

  /**
   * FINDING 5. The lifecycle's and the elector's log lines are written on the shared loop (LeaseElector's LeaseLog,
   * LifecycleDriver.log/publish/reportStopped), synchronously. A slow appender (a blocked stderr pipe, a remote
   * appender) while one runner logs stalls every runner of the JVM: here one runner's "Acquired Lease" line
   * takes 3 s to write, and a leader of another Lease, whose API server answers at once, misses its renew
   * deadline and loses its term. With a thread per runner (before 0201dfc) only the runner that logged waited.
   * Fixed: no line is written on the loop; each runner's lines go through its own serial {@link RunnerLog.Lane} on
   * the callback pool, so only the chatty runner's lines wait for the slow appender.
   */
  @Test
  void aSlowLogLineOfOneRunnerDoesNotEndAnotherRunnersTerm() throws Exception {
    List<ElectionState> healthyStates = new CopyOnWriteArrayList<>();
    ElectionRunner healthy = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("healthy").build())
        .service(log.service("healthy"))
        .listener(new ElectionListener() {
          @Override
          public void stateChanged(ElectionState previous, ElectionState current) {
            healthyStates.add(current);
          }
        })
        .start();
    java.io.PrintStream original = System.err;
    ElectionRunner chatty = null;
    try {
      // A generous bound, not a timing assert: on a loaded machine the first election may take seconds.
      assertThat(Replica.awaitTrue(() -> healthy.state().kind() == ElectionState.Kind.LEADING,
          Duration.ofSeconds(20))).isTrue();
      LeadershipTerm term = healthy.currentTerm().orElseThrow();
      assertThat(api.awaitWrites("healthy", 5)).as("control: it renews on its own").isTrue();
      assertThat(healthy.currentTerm()).as("control: it keeps its term on its own").contains(term);
      healthyStates.clear();
      // An appender that is slow for the chatty runner's lines only (say, a remote appender by logger or MDC).
      System.setErr(new java.io.PrintStream(new java.io.OutputStream() {
        private final StringBuilder line = new StringBuilder();

        @Override
        public synchronized void write(int b) {
          original.write(b);
          line.append((char) b);
          if (b == '\n') {
            String text = line.toString();
            line.setLength(0);
            if (text.contains("Acquired Lease elections/chatty-lease")) {
              try {
                // Must wait: this is the slow appender itself; a log write that takes 3 s is what the test is about.
                Thread.sleep(3_000);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          }
        }
      }, true));
      chatty = ElectionRunner.builder()
          .client(api.client())
          .decision(MockApi.CONTEND)
          .settings(MockApi.fastSettings("chatty").leaseName("chatty-lease").build())
          .service(log.service("chatty"))
          .start();

      // While the chatty runner's line is being written, the healthy leader must keep renewing: its renewals
      // are the event waited for (before the fix it missed its deadline within the 3 s of the slow write).
      // 25 renewals at a 200 ms retry period span the chatty runner's election and its 3 s write.
      assertThat(api.awaitWrites("healthy", 25)).as("the healthy leader renews throughout").isTrue();

      assertThat(healthyStates).as("the healthy leader's state changes").isEmpty();
      assertThat(term.isValid()).isTrue();
    } finally {
      System.setErr(original);
      if (chatty != null) {
        chatty.close();
      }
      healthy.close();
    }
  }
}
