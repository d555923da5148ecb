package io.github.electionpolicy.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The demo end to end, against its embedded mock API server over HTTP, with its default fast timings. */
class DemoTest {

  private static final Pattern RESULT =
      Pattern.compile("result: graceful take-over (\\d+) ms, crash take-over (\\d+) ms");

  @Test
  void threeReplicasElectALeaderThenShowGracefulAndCrashTakeOversAndExitZero() {
    Printed out = new Printed();
    Printed err = new Printed();

    int status = Demo.run(new String[] {"--replicas", "3"}, out.stream, err.stream);

    assertThat(status).as("exit status; stderr: %s", err).isEqualTo(Demo.EXIT_OK);
    String story = out.text();
    assertThat(story)
        .contains("replica-1  decided CONTEND [SUBSTRATE_USES_KUBERNETES_API]")
        .contains("replica-3  decided CONTEND [SUBSTRATE_USES_KUBERNETES_API]")
        .contains("LEADS: holds Lease default/election-demo")
        .containsPattern("TOOK OVER \\d+ ms after the leader closed \\(graceful\\)")
        .containsPattern("TOOK OVER \\d+ ms after the leader was killed \\(crash")
        .contains("stopped 3 replicas and the embedded API server");
    Matcher result = RESULT.matcher(story);
    assertThat(result.find()).as("result line in:%n%s", story).isTrue();
    long graceful = Long.parseLong(result.group(1));
    long crash = Long.parseLong(result.group(2));
    // A crashed leader's Lease must expire (2s, renewed every 200ms) before anyone takes it: a floor that load only
    // raises. How fast the graceful take-over is (a released Lease is taken at once) is a figure for the docs, not an
    // assert: on a loaded machine the embedded mock server stalls its watches (its watchdog says so on stderr) or
    // answers the release late, and the take-over then waits for the expiry too (seen in a clean clone's build with
    // other builds beside it: graceful 1937 ms, crash 1905 ms). The adapter's own tests check the hand-over.
    assertThat(graceful).isNotNegative();
    assertThat(crash).isGreaterThanOrEqualTo(1500);
  }

  @Test
  void theKilledLeaderStopsItsReconcilerBeforeTheNextLeaderStartsOne() {
    Printed out = new Printed();

    int status = Demo.run(new String[0], out.stream, new Printed().stream);

    assertThat(status).isEqualTo(Demo.EXIT_OK);
    List<String> lines = out.text().lines().toList();
    int crash = indexOf(lines, "-- crash: killing ");
    String killed = lines.get(crash).replaceAll("-- crash: killing (replica-\\d+) .*", "$1");
    int killedStopped = indexOf(lines, killed + "  reconciler stopped", crash);
    int nextStarted = indexOf(lines, "reconciler started", crash);
    assertThat(killedStopped).as("killed leader's stop, in:%n%s", out).isPositive();
    assertThat(nextStarted).as("next leader's start, in:%n%s", out).isGreaterThan(killedStopped);
  }

  @Test
  void killSwitchOffRunsEveryReplicaUnelectedWithAWarning() {
    Printed out = new Printed();

    int status = Demo.run(new String[] {"--kill-switch", "off"}, out.stream, new Printed().stream);

    assertThat(status).isEqualTo(Demo.EXIT_OK);
    assertThat(out.text())
        .contains("replica-2  decided RUN_UNELECTED [KILL_SWITCH_OFF]")
        .contains("WARN: RUN_UNELECTED: all 3 replicas run their reconcilers at the same time")
        .doesNotContain("LEADS")
        .doesNotContain("TOOK OVER");
    assertThat(out.text().lines().filter(l -> l.endsWith("reconciler started WITHOUT a Lease (unelected)")))
        .hasSize(3);
  }

  @Test
  void directSubstrateOutsideAPodRunsUnelected() {
    Printed out = new Printed();

    int status = Demo.run(new String[] {"--substrate", "direct", "--replicas", "1"}, out.stream,
        new Printed().stream);

    assertThat(status).isEqualTo(Demo.EXIT_OK);
    assertThat(out.text()).contains("replica-1  decided RUN_UNELECTED [OUTSIDE_POD_WITHOUT_KUBERNETES_API]");
  }

  @Test
  void runsTheReplicasAgainstAnotherApiServerAndFailsWithTheRoleToApplyWhenRbacDeniesALeaseVerb() {
    try (MockCluster cluster = MockCluster.answeringReviews(Set.of("update"))) {
      Printed out = new Printed();
      Printed err = new Printed();

      int status = Demo.run(new String[] {"--master", cluster.url(), "--namespace", "elections"}, out.stream,
          err.stream);

      assertThat(status).isEqualTo(Demo.EXIT_FAILED);
      assertThat(out.text()).contains("API server: " + cluster.url() + " (a real cluster: the Lease is really "
          + "written)").contains("stopped 3 replicas").doesNotContain("LEADS").doesNotContain("stays in the cluster");
      assertThat(err.text()).contains("demo: FAILED: leader election may not update leases (coordination.k8s.io) "
          + "in namespace \"elections\"").contains("kind: Role");
      assertThat(cluster.lease()).as("no replica got past the preflight").isNull();
    }
  }

  private static int indexOf(List<String> lines, String fragment) {
    return indexOf(lines, fragment, -1);
  }

  private static int indexOf(List<String> lines, String fragment, int after) {
    for (int i = after + 1; i < lines.size(); i++) {
      if (lines.get(i).contains(fragment)) {
        return i;
      }
    }
    return -1;
  }
}
